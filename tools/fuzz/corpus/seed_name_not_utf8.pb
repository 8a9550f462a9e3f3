


ÿþNoOp