#!/usr/bin/env python3
"""Man pages for widgethost, generated from its argument parser.

Reads `widgethost --experimental-dump-help` (swift-argument-parser's JSON
description of every command, option and default) and writes widgethost.1
and one widgethost-COMMAND.1 per subcommand into DIR, so the pages say what
the program accepts and cannot drift from it.

Usage: packaging/man.py PATH/TO/widgethost DIR [VERSION]
"""
import json
import os
import subprocess
import sys


def roff(text):
    """Text escaped for roff: backslashes, and a leading '.' or "'"."""
    text = (text or "").replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def discussion(text):
    """A discussion as paragraphs; indented lines (examples) kept as is."""
    out = []
    for block in (text or "").strip().split("\n\n"):
        if any(line.startswith("  ") for line in block.split("\n")):
            out.append(".PP\n.nf\n" + roff(block) + "\n.fi")
        else:
            out.append(".PP\n" + roff(" ".join(line.strip() for line in block.split("\n"))))
    return "\n".join(out)


def option_names(argument):
    names = []
    for name in argument.get("names", []):
        prefix = "-" if name["kind"] == "short" else "--"
        names.append("\\fB" + roff(prefix + name["name"]) + "\\fR")
    return ", ".join(names)


def argument_item(argument):
    kind = argument["kind"]
    value = argument.get("valueName", "")
    if kind == "positional":
        head = "\\fI" + roff(value) + "\\fR"
    elif kind == "option":
        head = option_names(argument) + " \\fI" + roff(value) + "\\fR"
    else:
        head = option_names(argument)
    body = roff(argument.get("abstract", ""))
    if argument.get("allValues") and kind != "flag":
        body += " One of: " + roff(", ".join(argument["allValues"])) + "."
    if argument.get("defaultValue") not in (None, "", "false"):
        body += " Default: " + roff(str(argument["defaultValue"])) + "."
    if argument.get("discussion"):
        body += " " + roff(str(argument["discussion"]))
    return ".TP\n" + head + "\n" + body


def synopsis(path, command):
    parts = ["\\fB" + roff(" ".join(path)) + "\\fR"]
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True):
            continue
        if argument["kind"] == "positional":
            item = "\\fI" + roff(argument.get("valueName", "")) + "\\fR"
        else:
            name = argument.get("preferredName") or (argument.get("names") or [{}])[0]
            flag = ("-" if name.get("kind") == "short" else "--") + name.get("name", "")
            item = "\\fB" + roff(flag) + "\\fR"
            if argument["kind"] == "option":
                item += " \\fI" + roff(argument.get("valueName", "")) + "\\fR"
        parts.append("[" + item + "]" if argument.get("isOptional") else item)
    if command.get("subcommands"):
        parts.append("\\fIcommand\\fR")
    return " ".join(parts)


def page(path, command, version):
    name = "-".join(path)
    lines = [
        '.TH "%s" "1" "" "widgethost %s" "widgethost manual"' % (name.upper(), version),
        ".SH NAME",
        roff(name) + " \\- " + roff(command.get("abstract", "")),
        ".SH SYNOPSIS",
        synopsis(path, command),
    ]
    if command.get("discussion"):
        lines += [".SH DESCRIPTION", discussion(command["discussion"])]
    shown = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    if shown:
        lines.append(".SH OPTIONS")
        lines += [argument_item(a) for a in shown]
    subcommands = [c for c in command.get("subcommands", []) if c.get("shouldDisplay", True)]
    if subcommands:
        lines.append(".SH COMMANDS")
        for sub in subcommands:
            lines += [".TP", "\\fB" + roff(sub["commandName"]) + "\\fR", roff(sub.get("abstract", ""))]
        lines.append(".SH SEE ALSO")
        lines.append(", ".join("\\fB%s\\-%s\\fR(1)" % (roff(name), roff(s["commandName"])) for s in subcommands))
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    program, directory = sys.argv[1], sys.argv[2]
    version = sys.argv[3] if len(sys.argv) > 3 else ""
    dump = json.loads(subprocess.run([program, "--experimental-dump-help"], check=True, capture_output=True).stdout)
    root = dump["command"]
    os.makedirs(directory, exist_ok=True)
    written = []

    def walk(path, command):
        file = os.path.join(directory, "-".join(path) + ".1")
        with open(file, "w") as out:
            out.write(page(path, command, version))
        written.append(file)
        for sub in command.get("subcommands", []):
            if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
                walk(path + [sub["commandName"]], sub)

    walk([root["commandName"]], root)
    print("\n".join(written))


if __name__ == "__main__":
    main()
