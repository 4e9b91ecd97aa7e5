"""Runs a command in a pseudo-terminal for a jest test (Node has no pty of its own here).

argv: the command and its arguments. stdin: JSON lines from the test, {"send": "<text>"} (keys typed: "\r" is
Enter, "\u0003" Ctrl-C, "\u0004" Ctrl-D) or {"kill": true}. stdout: JSON lines to the test, {"data": "<text>"}
for what the terminal showed, then {"exit": <code>} once the command has ended.
"""
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios

pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])

# A terminal 100 columns wide and 30 rows high.
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
decoder_buffer = b""
stdin = sys.stdin.fileno()
stdin_open = True
pending = b""


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


while True:
    watched = [fd] + ([stdin] if stdin_open else [])
    ready, _, _ = select.select(watched, [], [], 1.0)
    if fd in ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            break
        decoder_buffer += chunk
        try:
            text = decoder_buffer.decode("utf-8")
            decoder_buffer = b""
        except UnicodeDecodeError:
            continue  # the rest of a character comes with the next read
        emit({"data": text})
    if stdin_open and stdin in ready:
        data = os.read(stdin, 4096)
        if not data:
            stdin_open = False
            continue
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            command = json.loads(line)
            if "send" in command:
                os.write(fd, command["send"].encode("utf-8"))
            if command.get("kill"):
                os.kill(pid, signal.SIGKILL)

_, status = os.waitpid(pid, 0)
emit({"exit": os.waitstatus_to_exitcode(status)})
