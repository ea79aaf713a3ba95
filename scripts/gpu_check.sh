#!/usr/bin/env bash
# The CUDA product path on a GPU machine, in one run (see tests/test_cuda.py).
# Expects: torch with CUDA; gradviz's pure-Python dependencies as wheels in .whl/
# (landlockpy, pyseccomp, fastjsonschema); writes logs to $OUT (or ./gpu-out).
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
{
  nvidia-smi -L; uname -r; python3 --version
  python3 -c "import torch, landlockpy, pyseccomp; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0))"
} 2>&1 | tee "$OUT/machine.txt"
for mode in --restricted --trust; do
  echo "== gradviz run $mode --device cuda --demo inplace_memory"
  timeout 120 python3 -m gradviz run $mode --device cuda --demo inplace_memory 2>&1 | tail -25
  echo "rc=${PIPESTATUS[0]}"
done 2>&1 | tee "$OUT/product.txt"
timeout 120 python3 -m gradviz run --restricted --device cuda --demo inplace_memory --json \
  > "$OUT/inplace_cuda_restricted.json" 2> "$OUT/inplace_cuda_restricted.err"
echo "json rc=$?"
python3 - "$OUT/inplace_cuda_restricted.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r.get("confinement") or {}
print("mode", r.get("mode"), "device", r.get("device"))
print("applied", c.get("applied"), "skipped", c.get("skipped"))
print("device_rights", c.get("device_rights"))
for s in r["statements"]:
    print(f"{s['source'][:40]:40s} ok={s['ok']} alloc_MiB={s.get('allocated_bytes', 0)/2**20:.1f}")
PY
# what the driver costs the kernel's memory cap (RLIMIT_DATA counts VmData)
python3 - <<'PY' 2>&1 | tee "$OUT/vmdata.txt"
import re, tempfile
def vm(): return {k: v for k, v in re.findall(r"^(VmData|VmRSS|VmPeak):\s+(\d+ kB)", open("/proc/self/status").read(), re.M)}
from gradviz.core.confine import confine, close_device_door
from gradviz.kernel import start_device
report = confine(tempfile.mkdtemp(), memory_bytes=None, cuda=True)
import torch
print("after import torch", vm())
report = close_device_door(report, start_device)
print("after the device started", vm(), report.notes[-1:])
a = torch.randn(2048, 2048, device="cuda", requires_grad=True); (a @ a).sum().backward()
torch.cuda.synchronize(); print("after a matmul and backward", vm())
PY
# torch's threads, one per core each, times the workers, oversubscribe the cores
export OMP_NUM_THREADS=2
timeout 280 python3 -m pytest -q -p no:cacheprovider -n 8 --timeout 240 --durations=8 \
  tests/test_cuda.py tests/test_confine.py tests/test_scenarios.py tests/test_tutorials.py \
  tests/test_trusted.py tests/test_api.py tests/test_protocol.py tests/test_tracer.py 2>&1 | tee "$OUT/pytest.log" | tail -45
