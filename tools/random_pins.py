#!/usr/bin/env python3
"""Computes `random:` Const values from the formula in docs/graph-format.md
("Random data"), independently of tfrun's C++ (core/base/random.cc), for the
literal values pinned in core/graph_file/loader_test.cc.

Python floats are IEEE doubles and Python never fuses a multiply and an add,
so this is the same arithmetic on every machine. Run it and paste its lines
into the test when the formula changes on purpose:
    python3 tools/random_pins.py
"""
import math
import struct

M64 = (1 << 64) - 1


def mix(seed, index):
    z = (seed * 0x9E3779B97F4A7C15 + index * 0xD1B54A32D192ED03 + 0x632BE59BD9B4E019) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def uniform_unit(seed, index):
    return float(mix(seed, index) >> 11) * 2.0 ** -53


def portable_log(x):
    m, e = math.frexp(x)  # exact
    if m < 0.70710678118654752440:
        m *= 2
        e -= 1
    s = (m - 1) / (m + 1)
    s2 = s * s
    term, total = s, 0.0
    for k in range(1, 42, 2):
        total += term / k
        term *= s2
    return 2 * total + e * 0.693147180559945309417232121458


A = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
     1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
B = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
     6.680131188771972e+01, -1.328068155288572e+01]
C = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
     -2.549671010429643e+00, 4.374664141464968e+00, 2.938163982698783e+00]
D = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
     3.754408661907416e+00]


LOW = 0.02425  # below it (or above 1 - LOW) the normal's tail formula runs


def normal_p(seed, index):
    """The probability in (0, 1) whose inverse CDF is the normal draw."""
    return (float(mix(seed, index) >> 11) + 0.5) * 2.0 ** -53


def standard_normal(seed, index):
    p = normal_p(seed, index)
    low = LOW
    if p < low or p > 1 - low:
        upper = p > 1 - low
        q = math.sqrt(-2 * portable_log(1 - p if upper else p))
        x = ((((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
             ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1))
        return -x if upper else x
    q = p - 0.5
    r = q * q
    return ((((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q /
            (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1))


def to_float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def uniform(seed, index, lo, hi):
    return lo + (hi - lo) * uniform_unit(seed, index)


def uniform_int(seed, index, lo, hi):
    lo, span = math.ceil(lo), math.ceil(hi) - math.ceil(lo)
    return int(lo + math.floor(uniform_unit(seed, index) * span))


def normal(seed, index, mean, stddev):
    return mean + stddev * standard_normal(seed, index)


def main():
    # The tensors of LoaderValueTest.RandomValuesArePinnedToTheFormula, in
    # its order: what each holds, and how one element prints as a C++ literal.
    indices = [0, 1, 8, 999, 600001, 1048575]
    tensors = [
        ("uniform float32 [-1, 1) seed 7", lambda i: f"{to_float32(uniform(7, i, -1, 1))!r}f"),
        ("normal float32 mean 0 stddev 1 seed 7", lambda i: f"{to_float32(normal(7, i, 0, 1))!r}f"),
        ("normal float64 mean 10 stddev 2 seed 3", lambda i: f"{normal(3, i, 10, 2)!r}"),
        ("uniform int32 [0, 10) seed 1", lambda i: f"{uniform_int(1, i, 0, 10)}"),
    ]
    for title, literal in tensors:
        print(f"// {title}")
        for i in indices:
            print(f"  {{{i}, {literal(i)}}},")
    # Tail draws exercise portable_log: indices 1 and 8 above.
    lower = next(i for i in range(100000) if normal_p(7, i) < LOW)
    upper = next(i for i in range(100000) if normal_p(7, i) > 1 - LOW)
    for name, i in (("lower", lower), ("upper", upper)):
        print(f"// first {name}-tail index for seed 7: {i}, value {to_float32(normal(7, i, 0, 1))!r}f")


if __name__ == "__main__":
    main()
