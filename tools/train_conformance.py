#!/usr/bin/env python3
"""Training conformance (issue 30, item 4): graphs TensorFlow 2.21 wrote,
trained for 10 steps by TensorFlow and by tfrun from the same file, the
same seeds and the same feeds; every step's loss compared.

Two kinds of case, one case each:
  - the tower sample (graphs/tf/tower_sample_cpu_{1,2,4}.pb: two conv and
    max-pool layers, a dense layer with dropout, softmax cross entropy,
    Adam) on as many CPUs as towers (`device_count`), fed batches of 8 per
    tower from fixed random images (160 rows: each step its own batch, as
    `--batch` takes them);
  - the seed's own tower sample as its author wrote it
    (graphs/tf/golbin_tower_{1,2,4,8}.pb, tools/golbin_tower_sample.py:
    tf.layers convolutions initialized by tf_keras's stateless
    glorot-uniform, Adam) on its GPUs' place under soft placement (one
    CPU), fed as the tower sample is, and run by tfrun twice: on the CPU
    and on the 8 simulated GPUs it asks for (testdata/topologies/p40_x8.yaml);
  - TensorFlow's CIFAR-10 multi-GPU trainer (graphs/tf/cifar10_multi_gpu_
    {1,2,4}.pb, tools/cifar10_multi_gpu_sample.py: its synthetic data drawn
    by seeded random ops inside the graph, so nothing is fed), run as
    golbin's is;
  - tf_cnn_benchmarks (graphs/tf/tfcnn_{trivial,lenet,resnet20}_{ps,
    replicated,independent}.pb, tools/tf_cnn_benchmarks_graphs.py: the
    program as written, two GPU towers, its synthetic data), run as
    golbin's is, its two initializers first;
  - random TF1 training programs (tools/random_tf1_conformance.py's
    generator: dense towers, five optimizers, reference and resource
    variables, seeded initializers) on three CPUs, each placeholder fed the
    same [2, 4] array every step; programs TensorFlow refuses to place are
    skipped (their placement is random-tf1-conformance's).

TensorFlow runs `sess.run(init)` then `sess.run([loss, train], feed)` ten
times; tfrun runs `--init init --targets train --fetch loss --steps 10`.
A step matches when |tfrun - tf| <= rtol * |tf| + atol (NaN matches NaN,
an infinity the same infinity): rtol 1e-5, atol 1e-6 for steps 1-3, and
rtol 3e-3 from step 4 on. Why the two: tfrun's Tanh, Sigmoid, Exp and Log
are TensorFlow's to the bit, but its MatMul sums in one order where
TensorFlow's oneDNN picks one by the machine (docs/differences.md), the
exp and log inside its softmax and cross entropy are Debian's Eigen's,
its reductions sum in another order and its convolutions run on another
oneDNN (docs/graph-format.md, "Training"); a step's loss then differs by
about 1e-7. Ops on XLA_CPU run tfrun's CPU kernels where TensorFlow
compiles them with XLA (its own tanh, exp, log). Each step's update
carries these differences on: Adagrad, Adam and RMSProp divide each
gradient component by the root of its accumulated squares, a saturated
tanh turns a last-bit difference of its output into a large one of its
gradient (1 - y^2), and a chaotic trajectory (losses that jump by 2x from
step to step, or overflow to inf) grows them. Measured on a 2-core AMD
EPYC (family 23, AVX2): at most 5.7e-6 by step 3 and 1.1e-3 by step 10
over 214 programs (seed 30); the late tolerance keeps a margin of about
one step's growth over that, and a wrong update rule or kernel misses it
by orders of magnitude.

  tools/train_conformance.py --count 210 --seed 30 --python PY --tfrun BIN [--out DIR]

Prints "N passed, M failed" last; exit 1 when any case failed.
"""
import argparse
from io import StringIO
import math
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import random_tf1_conformance as placement  # noqa: E402  (the program generator)

STEPS = 10
TOWER_COUNTS = [1, 2, 4]
GOLBIN_TOWER_COUNTS = [1, 2, 4, 8]
CIFAR10_TOWER_COUNTS = [1, 2, 4]
TOWER_BATCH = 8  # rows per tower per step
TF_ENV = {"TF_XLA_FLAGS": "--tf_xla_enable_xla_devices", "CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}


# TensorFlow's sessions of each program: two, and on a mismatch RECHECK
# more, since a program whose updates race with its reads (or whose
# threads sum in another order) can give the same answer twice by chance
# (measured: 12 of 20 sessions of one such program update first).
RUNS = ("LOSS", "AGAIN")
RECHECK = tuple(f"RUN{i}" for i in range(8))


def losses_of(lines, run):
    return [float(l[len(run) + 1:]) for l in lines if l.startswith(run + " ")]


def tf_batch_program(programs, work, runs=RUNS):
    """One Python program: builds each random program, writes its graph,
    and trains it 10 steps between markers, printing each step's loss
    once per session in `runs`."""
    lines = ["import os, sys, numpy as np",
             "import tensorflow as tf",
             "tf.compat.v1.disable_eager_execution()",
             "def mark(k): print('=== PROGRAM %d' % k, flush=True)"]
    for p in programs:
        k = p.index
        lines += placement.written_program_lines(p, work, ["    print('TF-BUILD-ERROR'); ok = False"])
        lines += ["    feeds = {}",
                  "    rng = np.random.RandomState(%d)" % k,
                  "    for op in g.get_operations():",
                  "        if op.type == 'Placeholder':",
                  "            value = rng.uniform(-1, 1, (2, 4)).astype(np.float32)",
                  f"            np.save(os.path.join({work!r}, 'p{k}.' + op.name.replace('/', '__') + '.npy'), value)",
                  "            feeds[op.name + ':0'] = value",
                  "            print('FEED ' + op.name)",
                  f"    config = tf.compat.v1.ConfigProto(device_count={{'CPU': 3}}, allow_soft_placement={p.soft})",
                  f"    for run in {tuple(runs)!r}:",
                  "      with tf.compat.v1.Session(graph=g, config=config) as sess:",
                  "        try:",
                  "            sess.run('init')",
                  f"            for step in range({STEPS}):",
                  "                print(run + ' %r' % float(sess.run(['loss:0', 'train'], feeds)[0]))",
                  "        except tf.errors.OpError as e:",
                  "            print('TF-ERROR: ' + e.message.splitlines()[0])"]
    lines.append(f"mark({programs[-1].index + 1 if programs else 0})")
    return "\n".join(lines) + "\n"


class TowerCase:
    """A tower program TensorFlow and tfrun train from one graph file: its
    images and labels placeholders, and how each is told its devices."""

    def __init__(self, label, graph, towers, images, labels, soft, init=("init",), train="train", loss="loss"):
        # images, labels: the placeholders fed; None where the graph draws its own data.
        # init, train, loss: the program's initializers (run once, in order), train op and loss.
        self.init, self.train, self.loss = list(init), train, loss
        self.label, self.graph, self.towers = label, graph, towers
        self.images, self.labels, self.soft = images, labels, soft
        self.key = os.path.splitext(graph)[0]

    def config(self):
        if self.soft:  # its GPUs are not here: soft placement puts it on the CPU
            return "tf.compat.v1.ConfigProto(allow_soft_placement=True)"
        return f"tf.compat.v1.ConfigProto(device_count={{'CPU': {self.towers}}})"

    def tfrun_runs(self):
        """(name suffix, tfrun's device flags) of each tfrun run compared
        with TensorFlow's: a GPU program also on 8 simulated GPUs (their
        kernels run on the host: the same losses), under soft placement as
        the CIFAR-10 program's session asks (its summaries have no GPU
        kernel)."""
        if not self.soft:
            return [("", ["--device-count", f"CPU={self.towers}"])]
        return [(" (soft placement on the CPU)", ["--soft-placement"]),
                (" (8 simulated GPUs)", ["--soft-placement", "--devices",
                                         os.path.join(HERE, "..", "testdata", "topologies", "p40_x8.yaml")])]


TOWER_CASES = [TowerCase("tower sample", f"tower_sample_cpu_{t}.pb", t, "x", "y", False) for t in TOWER_COUNTS] + \
    [TowerCase("golbin's tower sample", f"golbin_tower_{t}.pb", t, "Placeholder", "Placeholder_1", True)
     for t in GOLBIN_TOWER_COUNTS] + \
    [TowerCase("CIFAR-10 multi-GPU trainer", f"cifar10_multi_gpu_{t}.pb", t, None, None, True)
     for t in CIFAR10_TOWER_COUNTS] + \
    [TowerCase(f"tf_cnn_benchmarks {model}, {update}", f"tfcnn_{model}_{update}.pb", 2, None, None, True,
               init=("init", "local_var_init_op_group"), train="main_fetch_group", loss="average_loss/Mean")
     for model in ("trivial", "lenet", "resnet20") for update in ("ps", "replicated", "independent")]


def tf_tower_program(work, graphs_dir, cases=TOWER_CASES, runs=RUNS):
    lines = ["import os, numpy as np, tensorflow as tf",
             "tf.compat.v1.disable_eager_execution()"]
    for case in cases:
        batch = TOWER_BATCH * case.towers
        lines += [f"print('=== TOWERS {case.key}', flush=True)",
                  "gd = tf.compat.v1.GraphDef()",
                  f"gd.ParseFromString(open({os.path.join(graphs_dir, case.graph)!r}, 'rb').read())",
                  "g = tf.Graph()",
                  "with g.as_default(): tf.compat.v1.import_graph_def(gd, name='')",
                  f"rng = np.random.RandomState({case.towers})",
                  f"x = rng.uniform(0, 1, ({batch * STEPS}, 28, 28, 1)).astype(np.float32)",
                  f"y = np.eye(10, dtype=np.float32)[rng.randint(0, 10, {batch * STEPS})]",
                  f"np.save({os.path.join(work, f'{case.key}.x.npy')!r}, x)",
                  f"np.save({os.path.join(work, f'{case.key}.y.npy')!r}, y)",
                  f"for run in {tuple(runs)!r}:",  # several: is TensorFlow's answer its own every time?
                  f"  with tf.compat.v1.Session(graph=g, config={case.config()}) as sess:",
                  f"    for name in {case.init!r}: sess.run(name)",
                  f"    for step in range({STEPS}):",
                  (f"        feed = {{'{case.images}:0': x[step * {batch}:(step + 1) * {batch}], "
                   f"'{case.labels}:0': y[step * {batch}:(step + 1) * {batch}]}}" if case.images else
                   "        feed = None"),
                  f"        print(run + ' %r' % float(sess.run(['{case.loss}:0', '{case.train}'], feed)[0]))"]
    return "\n".join(lines) + "\n"


WORST = [0.0, 0.0]  # the largest relative difference of a compared step: before LATE_STEP, from it
STEP_LINE = re.compile(r"^\[(?:np\.float32\()?([^)\]]+)\)?\]$")


def tfrun_losses(args, env):
    q = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    losses = []
    for line in q.stdout.splitlines():
        m = STEP_LINE.match(line)
        if m:
            losses.append(float(m.group(1)))
    return q.returncode, losses, q.stderr


def close(ours, theirs, rtol, atol):
    if math.isnan(theirs) or math.isnan(ours):
        return math.isnan(theirs) and math.isnan(ours)
    if math.isinf(theirs) or math.isinf(ours):
        return ours == theirs
    return abs(ours - theirs) <= rtol * abs(theirs) + atol


LATE_STEP = 4  # from this step on: --late-rtol
LATE_ATOL = 1e-4


def compare(name, theirs, ours, rtol, atol, listing, late_rtol):
    code, losses, err = ours
    if code != 0 or len(losses) != len(theirs):
        listing.write(f"=== {name}: tfrun exit {code}, {len(losses)} steps\n{err}\n")
        return False
    for i, (a, b) in enumerate(zip(losses, theirs)):
        if math.isfinite(a) and math.isfinite(b) and b != 0:
            WORST[0 if i + 1 < LATE_STEP else 1] = max(WORST[0 if i + 1 < LATE_STEP else 1], abs(a - b) / abs(b))
    bad = [i for i, (a, b) in enumerate(zip(losses, theirs))
           if not (close(a, b, rtol, atol) if i + 1 < LATE_STEP else close(a, b, late_rtol, LATE_ATOL))]
    if bad:
        listing.write(f"=== {name}: steps {[i + 1 for i in bad]} differ\n  tensorflow {theirs}\n  tfrun      {losses}\n")
        return False
    return True


def agreed_steps(sessions, rtol, atol, late_rtol):
    """How many first steps every session's loss agrees on (within the
    step's tolerance): past them no step is TensorFlow's one answer."""
    first = sessions[0]
    for k in range(len(first)):
        for other in sessions[1:]:
            if k >= len(other):
                return k
            x, y = first[k], other[k]
            if not (close(x, y, rtol, atol) if k + 1 < LATE_STEP else close(x, y, late_rtol, LATE_ATOL)):
                return k
    return len(first)


def tower_sessions(python, work, case, env):
    """TensorFlow's losses of one tower case in each of the RECHECK sessions."""
    source = os.path.join(work, f"recheck_{case.key}.py")
    with open(source, "w") as f:
        f.write(tf_tower_program(work, os.path.join(HERE, "..", "graphs", "tf"), [case], RECHECK))
    p = subprocess.run([python, "-u", source], capture_output=True, text=True, env=env)
    return [losses_of(p.stdout.splitlines(), run) for run in RECHECK]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=210, help="random programs to generate")
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--python", default=sys.executable, help="a Python with TensorFlow 2.21")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-6)
    ap.add_argument("--late-rtol", type=float, default=3e-3, help=f"rtol from step {LATE_STEP} on")
    ap.add_argument("--out", default=None, help="where differences.txt goes")
    ap.add_argument("--no-towers", action="store_true")
    a = ap.parse_args()
    out_dir = a.out or tempfile.mkdtemp(prefix="tfrun-train-conformance-")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tfrun-train-work-")
    env = dict(os.environ, **TF_ENV)
    listing = open(os.path.join(out_dir, "differences.txt"), "w")
    passed = failed = 0

    if not a.no_towers:
        source = os.path.join(work, "towers.py")
        with open(source, "w") as f:
            f.write(tf_tower_program(work, os.path.join(HERE, "..", "graphs", "tf")))
        p = subprocess.run([a.python, "-u", source], capture_output=True, text=True, env=env)
        parts = re.split(r"^=== TOWERS (\S+)$", p.stdout, flags=re.M)
        theirs = {parts[i]: [float(l[5:]) for l in parts[i + 1].splitlines() if l.startswith("LOSS ")]
                  for i in range(1, len(parts) - 1, 2)}
        again = {parts[i]: [float(l[6:]) for l in parts[i + 1].splitlines() if l.startswith("AGAIN ")]
                 for i in range(1, len(parts) - 1, 2)}
        rechecked = {}  # TensorFlow's RECHECK sessions of a case, by key
        for case in TOWER_CASES:
            for suffix, flags in case.tfrun_runs():
                name = f"{case.label}, {case.towers} tower{'s' if case.towers > 1 else ''}{suffix}"
                if len(theirs.get(case.key, [])) != STEPS:
                    print(f"TensorFlow did not train {name}:\n{p.stderr[-2000:]}")
                    failed += 1
                    continue
                args = [a.tfrun, os.path.join(HERE, "..", "graphs", "tf", case.graph)] + flags + [
                    "--targets", case.train, "--fetch", case.loss, "--steps", str(STEPS)]
                for init in case.init:
                    args += ["--init", init]
                if case.images:
                    args += ["--batch", str(TOWER_BATCH * case.towers),
                             "--feed", f"{case.images}=@{os.path.join(work, f'{case.key}.x.npy')}",
                             "--feed", f"{case.labels}=@{os.path.join(work, f'{case.key}.y.npy')}"]
                # TensorFlow's CUDA_VISIBLE_DEVICES=-1 would hide the simulated GPUs too.
                run_env = env if "--devices" not in flags else \
                    {k: v for k, v in env.items() if k != "CUDA_VISIBLE_DEVICES"}
                # Where TensorFlow's sessions disagree by more than the
                # step's tolerance (threads summing in another order,
                # amplified: tf_cnn_benchmarks' lenet on its unnormalized
                # synthetic images differs by about 1% at step 2), no later
                # step is TensorFlow's answer: the steps before the first
                # that disagrees are compared. Two sessions can agree by
                # chance: on a mismatch RECHECK sessions more decide.
                sessions = [theirs[case.key], again.get(case.key, [])]
                same = agreed_steps(sessions, a.rtol, a.atol, a.late_rtol)
                ours = tfrun_losses(args, run_env)
                worst = WORST[:]
                ok = compare(name, theirs[case.key][:max(same, 1)], (ours[0], ours[1][:max(same, 1)], ours[2]),
                             a.rtol, a.atol, StringIO(), a.late_rtol)
                if not ok:
                    if case.key not in rechecked:
                        rechecked[case.key] = tower_sessions(a.python, work, case, env)
                    sessions += [r for r in rechecked[case.key] if len(r) == STEPS]
                    same = agreed_steps(sessions, a.rtol, a.atol, a.late_rtol)
                    WORST[:] = worst
                    ok = compare(name, theirs[case.key][:max(same, 1)], (ours[0], ours[1][:max(same, 1)], ours[2]),
                                 a.rtol, a.atol, listing, a.late_rtol)
                note = "" if same == STEPS else \
                    f"; TensorFlow's own {len(sessions)} runs differ from step {same + 1}: steps 1-{max(same, 1)} compared"
                print(f"{name}: {'matched' if ok else 'DIFFERS'} "
                      f"(TensorFlow's losses {theirs[case.key][0]:.6g} ... {theirs[case.key][-1]:.6g}{note})")
                passed, failed = passed + ok, failed + (not ok)

    rng = random.Random(a.seed)
    programs = [placement.Program(rng, k).build() for k in range(a.count)]
    theirs = placement.run_tf_batch(a.python, tf_batch_program(programs, work), work, env, len(programs))
    skipped = racing = 0
    for prog in programs:
        k = prog.index
        lines = theirs[k]
        losses = [float(l[5:]) for l in lines if l.startswith("LOSS ")]
        again = [float(l[6:]) for l in lines if l.startswith("AGAIN ")]
        if len(losses) != STEPS:
            skipped += 1  # TensorFlow did not build, place or run it
            continue
        if len(again) != STEPS or not all(close(x, y, 0, 0) for x, y in zip(again, losses)):
            # Its updates race with its reads in TensorFlow's parallel
            # executor (a reference variable read after its update began):
            # two sessions of the same graph disagree, so no answer is TF's.
            racing += 1
            continue
        path = os.path.join(work, f"p{k}.{prog.form}")
        args = [a.tfrun, path, "--device-count", "CPU=3", "--init", "init", "--targets", "train", "--fetch", "loss",
                "--steps", str(STEPS)]
        args += ["--soft-placement"] if prog.soft else []
        args += ["--import", "python"] if prog.form == "meta" else []
        for l in lines:
            if l.startswith("FEED "):
                name = l[5:]
                args += ["--feed", f"{name}=@{os.path.join(work, f'p{k}.' + name.replace('/', '__') + '.npy')}"]
        name = f"program {k} ({prog.form}, soft={prog.soft})"
        ours = tfrun_losses(args, env)
        worst = WORST[:]
        if not compare(name, losses, ours, a.rtol, a.atol, StringIO(), a.late_rtol):
            # Two sessions may agree by chance: RECHECK more.
            recheck = placement.run_tf_batch(a.python, tf_batch_program([prog], work, RECHECK), work, env, 1)[k]
            runs = [losses_of(recheck, run) for run in RECHECK]
            if any(len(r) == STEPS and r != losses for r in runs):
                WORST[:] = worst  # not TensorFlow's one answer: not a difference
                racing += 1
                listing.write(f"=== {name}: TensorFlow's sessions disagree (found on a recheck of "
                              f"{len(RECHECK)} more): not compared\n")
                continue
        ok = compare(name, losses, ours, a.rtol, a.atol, listing, a.late_rtol)
        if not ok:
            listing.write("\n".join(prog.lines) + "\n")
        passed, failed = passed + ok, failed + (not ok)
    listing.close()
    print(f"random training programs, seed {a.seed}: {a.count} generated, {skipped} not trained by TensorFlow "
          f"(refused or not built), {racing} whose TensorFlow sessions disagree (racing updates), "
          f"{a.count - skipped - racing} compared over {STEPS} steps (listing: {out_dir}/differences.txt)")
    print(f"largest relative difference of a step's loss: {WORST[0]:.3g} in steps 1-{LATE_STEP - 1}, "
          f"{WORST[1]:.3g} later (rtol {a.rtol:g}, atol {a.atol:g}; "
          f"from step {LATE_STEP} rtol {a.late_rtol:g}, atol {LATE_ATOL:g})")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
