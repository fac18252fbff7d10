#!/usr/bin/env python3
"""Runs the examples in the documentation, so that the docs cannot rot.

    run_docs.py --root REPO [--path DIR]... FILE.md...

Every fenced block marked `console` is a session: each line starting with
`$ ` is a command (a trailing backslash continues it), run with bash in a
fresh empty folder per file (holding a link `examples` to the repository's
examples, so that paths read as they do from the repository root), with each
--path folder put first on PATH. A command must exit 0, or N when the line
ends in `# exit N`. Every other non-empty line of the block is output the
command before it prints (stdout and stderr). Shown without a `...` line,
they are all it prints, in order (each line compared with its trailing
blanks removed); with one, `...` stands for lines left out and each line
shown must be part of what it printed. A command with no lines after it
has its output not shown, and not checked. Other blocks (`sh`
synopses with [options], `cpp`, `python`) are not run here.
Every relative link ([text](file.md#anchor)) must name a file of the
repository and, with an anchor, one of its headings (GitHub's spelling).
Exits 1, naming the file, the line and the difference, at the first example
or link that does not do what its document says.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def sessions(path):
    """(line number, command, expected exit, [expected lines], partial) per command."""
    out = []
    inside = False
    pending = None
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not inside:
            inside = line.strip() == "```console"
            i += 1
            continue
        if line.strip() == "```":
            inside = False
            i += 1
            continue
        if line.startswith("$ "):
            number = i + 1
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            code = 0
            m = re.search(r"\s#\s*exit\s+(\d+)\s*$", command)
            if m:
                code = int(m.group(1))
                command = command[: m.start()]
            pending = [number, command, code, [], False]
            out.append(pending)
        elif line.strip() == "..." and pending is not None:
            pending[4] = True
        elif line.strip() and pending is not None:
            pending[3].append(line.rstrip())
        i += 1
    return out


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def check_links(root, name):
    """Relative links name files and headings that exist."""
    path = os.path.join(root, name)
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+://", target):
                continue
            file, _, part = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(linked):
                sys.exit("docs: %s:%d: the link %s names no file" % (name, number, target))
            if part:
                headings = [anchor(l.lstrip("#")) for l in open(linked, encoding="utf-8")
                            if l.startswith("#")]
                if part not in headings:
                    sys.exit("docs: %s:%d: the link %s names no heading of %s"
                             % (name, number, target, file or name))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(args.path + [env.get("PATH", "")])
    total = 0
    for name in args.files:
        path = os.path.join(args.root, name)
        check_links(args.root, name)
        commands = sessions(path)
        with tempfile.TemporaryDirectory(prefix="shardpoint-docs-") as work:
            os.symlink(os.path.join(args.root, "examples"), os.path.join(work, "examples"))
            for number, command, code, expected, partial in commands:
                run = subprocess.run(["bash", "-c", command], cwd=work, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     timeout=600)
                printed = run.stdout.decode("utf-8", "replace")
                where = "%s:%d: %s" % (name, number, command)
                if run.returncode != code:
                    sys.exit("docs: %s\n  exited %d, the document says %d; it printed:\n%s"
                             % (where, run.returncode, code, printed))
                if expected and not partial:
                    got = [line.rstrip() for line in printed.split("\n") if line.strip()]
                    if got != expected:
                        sys.exit("docs: %s\n  printed other lines than the document shows "
                                 "(add a line '...' if some are left out):\n%s\n  it printed:\n%s"
                                 % (where, "\n".join("    " + w for w in expected), printed))
                for want in expected:
                    if want.strip() not in printed:
                        sys.exit("docs: %s\n  did not print the line the document shows:\n"
                                 "    %s\n  it printed:\n%s" % (where, want, printed))
                total += 1
    print("docs: %d command(s) in %d file(s) ran as documented" % (total, len(args.files)))


if __name__ == "__main__":
    main()
