
NoOp
	
bNoOp