#!/usr/bin/env python3
"""Writes testdata/printer/numpy_cases.txt: arrays and what NumPy's str()
prints for them, in the default mode and legacy='1.13'.

Run with Debian's python3-numpy and ml_dtypes (bfloat16, as TensorFlow
prints it; required: every dtype draws from one random stream, so a run
without the bfloat16 cases would change every case after them):
  /usr/bin/python3 tools/gen_print_cases.py > testdata/printer/numpy_cases.txt
and with NumPy 2 (what TensorFlow 2.21 installs), for the NumPy 2 mode:
  /tmp/tfenv/bin/python tools/gen_print_cases.py > testdata/printer/numpy2_cases.txt

Format, per case:
  case DTYPE LEGACY RANK DIM...
  data HEX            (little-endian element bytes)
  expect NBYTES
  <NBYTES of expected text>
"""
import sys

import numpy as np

try:
    import ml_dtypes
    BF16 = ml_dtypes.bfloat16
except ImportError:
    sys.exit("gen_print_cases.py: ml_dtypes is required (pip install ml_dtypes): without the bfloat16 cases the "
             "shared random stream would give every later case other numbers than testdata/printer/numpy_cases.txt")

rng = np.random.default_rng(20261122)
DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
          "int32": np.int32, "int64": np.int64, "bool": np.bool_}
if BF16 is not None:
    DTYPES["bfloat16"] = BF16


def scalar_str(a):
    # Session.run returns a NumPy scalar for a rank-0 tensor.
    return str(a[()])


def emit(out, name, a, legacy):
    np.set_printoptions(legacy="1.13" if legacy else False)
    text = scalar_str(a) if a.ndim == 0 else str(a)
    np.set_printoptions(legacy=False)
    raw = np.ascontiguousarray(a).tobytes()
    out.write("case %s %d %d %s\n" % (name, legacy, a.ndim,
                                      " ".join(str(d) for d in a.shape)))
    out.write("data %s\n" % raw.hex())
    b = text.encode()
    out.write("expect %d\n" % len(b))
    out.write(text + "\n")


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 1 / 3, 2 / 3, 22.0, 1e8, 1e-4, 1e-5,
           123456.789, 1e16, 1e-16, 3.14159265358979, float("nan"),
           float("inf"), float("-inf"), 65504.0, 1e-7, 999.5, 1000.0, 0.1]


def float_values(dtype, shape, kind):
    n = int(np.prod(shape)) if shape else 1
    if kind == "uniform":
        v = rng.uniform(-10, 10, n)
    elif kind == "normal":
        v = rng.normal(0, 1, n)
    elif kind == "wide":
        v = rng.normal(0, 1, n) * 10.0 ** rng.integers(-12, 12, n)
    elif kind == "ints":
        v = rng.integers(-1000, 1000, n).astype(np.float64)
    elif kind == "halves":
        v = rng.integers(-40, 40, n) / 4.0
    elif kind == "special":
        v = np.array([SPECIAL[i] for i in rng.integers(0, len(SPECIAL), n)])
    elif kind == "positive_small":
        v = rng.uniform(0, 1, n) * 10.0 ** rng.integers(-6, 0, n)
    else:
        raise ValueError(kind)
    with np.errstate(over="ignore"):
        return v.astype(dtype).reshape(shape)


def int_values(dtype, shape, kind):
    n = int(np.prod(shape)) if shape else 1
    info = np.iinfo(dtype)
    if kind == "extreme":
        v = rng.choice([info.min, info.max, 0, -1, 1], n)
    elif kind == "wide":
        v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    else:
        v = rng.integers(-100, 100, n)
    return np.array(v, dtype=dtype).reshape(shape)


SHAPES = [(), (1,), (2,), (3,), (7,), (2, 2), (2, 3), (3, 1), (1, 3), (4, 5),
          (2, 2, 2), (2, 3, 4), (1, 1, 1, 1), (2, 1, 2, 3), (30,), (11, 13),
          (0,), (2, 0), (1001,), (40, 30), (11, 10, 10), (3, 4, 5, 20)]


def main():
    out = sys.stdout
    for legacy in (0, 1):
        for name, dtype in DTYPES.items():
            for shape in SHAPES:
                if name == "bool":
                    kinds = ["bool"]
                elif name in ("int32", "int64"):
                    kinds = ["small", "wide", "extreme"]
                else:
                    kinds = ["uniform", "normal", "wide", "ints", "halves",
                             "special", "positive_small"]
                for kind in kinds:
                    if name == "bool":
                        n = int(np.prod(shape)) if shape else 1
                        a = (rng.integers(0, 2, n) == 1).reshape(shape)
                    elif kind in ("small", "wide", "extreme") and name.startswith("int"):
                        a = int_values(dtype, shape, kind)
                    else:
                        a = float_values(dtype, shape, kind)
                    emit(out, name, a, legacy)
    # The verified pairs of tf-semantics.md section 6, explicitly.
    for legacy in (0, 1):
        for values in ([[22., 28.], [49., 64.]], [1., 2.5, 3.], [1 / 3, 2 / 3],
                       [1e8, 1.], [1., 1000.], [float("nan"), 1., float("inf")],
                       [-0., 1.], [[-1., 2.], [3., -4.5]], [[44., 56.], [98., 128.]],
                       [2., 4., 6.], 22.0, [float("nan")], [float("-inf"), 1.]):
            emit(out, "float32", np.array(values, dtype=np.float32), legacy)
        emit(out, "int32", np.array([[22, 28], [49, 64]], dtype=np.int32), legacy)
    # Every float16 value, in rows of 64 and as scalars of a sample.
    all_half = np.arange(65536, dtype=np.uint16).view(np.float16)
    for legacy in (0,):
        for row in all_half.reshape(-1, 16):
            emit(out, "float16", row, legacy)


if __name__ == "__main__":
    main()
