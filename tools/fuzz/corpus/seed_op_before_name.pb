
	NoOp
a
	
bNoOp