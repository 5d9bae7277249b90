"""The real peers the tests run: the official-SDK server (one module, flavoured by switches) and node preloads."""

from pathlib import Path

#: the official-SDK test server, run as ``python SDK_SERVER [transport] [port] [--as FLAVOUR] [--changed]``
SDK_SERVER = Path(__file__).resolve().parent / "sdk_server.py"
