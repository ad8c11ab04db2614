# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reading and writing files in place (open 'w' truncates, never rename, as the kernel's
files and a drifting writer do), and comparing their text."""


def read_text(path):
    with open(path, "r") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def normalise_ws(text):
    return " ".join(text.split())
