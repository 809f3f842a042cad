"""Packs the binary a wheel carries into a release archive, and prints the archive's path.

    python packaging/archive.py WHEEL TARGET OUTDIR

The archive is brickform-VERSION-TARGET.tar.gz (a .zip when the binary is brickform.exe),
holding one directory of the same name with the binary, README.md and CHANGELOG.md: the same
binary `pip install` installs, so the archives and the wheels of a release never differ. The
release workflow (.github/workflows/release.yml) runs it for every platform; scripts/test-wheel
runs it on the wheel it tests.
"""

import io
import pathlib
import re
import sys
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    wheel, target, outdir = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
    with zipfile.ZipFile(wheel) as whl:
        binaries = [
            n for n in whl.namelist() if re.fullmatch(r"brickform-[^/]+\.data/scripts/brickform(\.exe)?", n)
        ]
        if len(binaries) != 1:
            sys.exit(f"archive.py: {wheel} carries no brickform binary (or several): {binaries}")
        binary = binaries[0]
        data = whl.read(binary)
    version = binary.split("/")[0][len("brickform-") : -len(".data")]
    exe = pathlib.PurePosixPath(binary).name
    name = f"brickform-{version}-{target}"
    files = [(exe, data, 0o755)] + [
        (doc, (ROOT / doc).read_bytes(), 0o644) for doc in ("README.md", "CHANGELOG.md")
    ]
    outdir.mkdir(parents=True, exist_ok=True)
    if exe.endswith(".exe"):
        path = outdir / f"{name}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
            for fname, content, mode in files:
                info = zipfile.ZipInfo(f"{name}/{fname}", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                out.writestr(info, content)
    else:
        path = outdir / f"{name}.tar.gz"
        with tarfile.open(path, "w:gz") as out:
            for fname, content, mode in files:
                info = tarfile.TarInfo(f"{name}/{fname}")
                info.size, info.mode = len(content), mode
                out.addfile(info, io.BytesIO(content))
    print(path)


if __name__ == "__main__":
    main()
