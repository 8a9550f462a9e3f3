
L
sConst*
dtype0*3
value*B(€”λάBabcdefghijklmnopqrstuvwxyz