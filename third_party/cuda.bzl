"""cuda_library: compiles .cu files with the toolkit's nvcc into a cc_library.

Offline and without rules_cuda: one genrule per .cu file calls
/usr/local/cuda/bin/nvcc for sm_80 and sm_90 plus compute_90 PTX, and the
objects become the srcs of a cc_library linked against static cudart.
"""

NVCC = "/usr/local/cuda/bin/nvcc"

NVCC_FLAGS = " ".join([
    "-ccbin /usr/bin/g++",
    "-std=c++17",
    "-O3",
    "-Xcompiler -fPIC",
    "-gencode arch=compute_80,code=sm_80",
    "-gencode arch=compute_90,code=sm_90",
    "-gencode arch=compute_90,code=compute_90",
])

def cuda_library(name, srcs, hdrs = [], deps = [], **kwargs):
    objs = []
    for src in srcs:
        base = src.replace("/", "_").replace(".cu", "")
        out = "_nvcc/%s/%s.o" % (name, base)
        native.genrule(
            name = "%s_%s_nvcc" % (name, base),
            srcs = [src] + hdrs,
            outs = [out],
            cmd = "%s %s -I. -I$(GENDIR) -c $(location %s) -o $@" % (NVCC, NVCC_FLAGS, src),
            message = "nvcc %s" % src,
        )
        objs.append(out)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["//third_party:cudart_static"],
        linkstatic = 1,
        **kwargs
    )
