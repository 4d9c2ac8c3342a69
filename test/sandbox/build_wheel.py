"""Builds one tiny pure-Python wheel for the package-layer tests (N-5), with the standard library only.

    python build_wheel.py DIR NAME VERSION PAD_BYTES [REQUIREMENT...]

The module NAME (dashes as underscores) holds VALUE = 42 and, when PAD_BYTES > 0, a data file of
that many bytes (for the quota). Prints the wheel's file name.
"""

import os
import sys
import zipfile


def main():
    directory, name, version, pad, *requires = sys.argv[1:]
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        f"{module}/__init__.py": "VALUE = 42\n",
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: albedo-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if int(pad) > 0:
        files[f"{module}/pad.bin"] = os.urandom(int(pad) // 2).hex()
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    wheel = f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as archive:
        for member, text in files.items():
            archive.writestr(member, text)
        archive.writestr(f"{info}/RECORD", record)
    print(wheel)


if __name__ == "__main__":
    main()
