"""The CUDA check: cudagraphs and inductor on a GPU, for three models, in one short run.

Run it on a machine with an NVIDIA GPU (it exits with status 2 and a message where
there is none; `make test` does not need it):

    python benchmarks/gpu_check.py [--models gpt2 bert llama] [--number 50]

For each model of the model suite (tiny configs, eval mode, `torch.no_grad()`, moved
to `cuda`) and each backend ("cudagraphs", "inductor"): minidynamo's outputs must equal
eager's (rtol 1e-3), and the script prints the time per call of eager, torch.compile
and minidynamo with that backend (CUDA-synchronised, best of `--repeat`), with the
speed-ups against eager and the ratio against torch.compile. It fails (status 1) on a
wrong output, never on a slow one: the figures are for reading.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
import torch._dynamo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's tests/

import minidynamo  # noqa: E402
from tests.models.zoo import CASES  # noqa: E402

BACKENDS = ("cudagraphs", "inductor")


def to_cuda(value):
    if isinstance(value, torch.Tensor):
        return value.cuda()
    if isinstance(value, dict):
        return {key: to_cuda(each) for key, each in value.items()}
    return value


def first_tensor(output):
    if isinstance(output, torch.Tensor):
        return output
    for value in (output.values() if isinstance(output, dict) else output):
        if isinstance(value, torch.Tensor):
            return value
    raise TypeError(f"no tensor in the output {type(output).__name__}")


def per_call_ms(call, number: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(number):
            call()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - started) / number)
    return best * 1e3


def check_model(name: str, number: int, repeat: int) -> bool:
    case = next(each for each in CASES if each.name == name)
    model, inputs = case.build().cuda(), to_cuda(case.inputs(0))
    ok = True
    with torch.no_grad():
        expected = first_tensor(model(**inputs))
        eager_ms = per_call_ms(lambda: model(**inputs), number, repeat)
        for backend in BACKENDS:
            times = {}
            for label, compile_fn, reset in (("torch", torch.compile, torch._dynamo.reset),
                                             ("mini", minidynamo.compile, minidynamo.reset)):
                reset()
                compiled = compile_fn(model, backend=backend)
                for _ in range(3):  # cudagraphs records on an early call, replays after
                    got = first_tensor(compiled(**inputs))
                if label == "mini":
                    try:
                        torch.testing.assert_close(got, expected, rtol=1e-3, atol=1e-3)
                    except AssertionError as error:
                        print(f"WRONG {name} {backend}: {str(error).splitlines()[0]}")
                        ok = False
                times[label] = per_call_ms(lambda: compiled(**inputs), number, repeat)
            print(f"{name:8} {backend:11} eager {eager_ms:8.3f} ms  torch {times['torch']:8.3f} ms"
                  f" (x{eager_ms / times['torch']:5.2f})  mini {times['mini']:8.3f} ms"
                  f" (x{eager_ms / times['mini']:5.2f})  mini/torch {times['mini'] / times['torch']:5.2f}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["gpt2", "bert", "llama"])
    parser.add_argument("--number", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device here (torch.cuda.is_available() is False); run it on a "
              "machine with an NVIDIA GPU and a CUDA build of torch 2.13.0", file=sys.stderr)
        return 2
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"{options.number} calls x best of {options.repeat}")
    results = [check_model(name, options.number, options.repeat) for name in options.models]
    print("outputs equal eager" if all(results) else "WRONG OUTPUTS: see above")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
