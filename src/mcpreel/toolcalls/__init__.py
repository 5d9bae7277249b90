"""Tool-call traces: a session normalized into tool-call semantics (``mcpreel import``).

The normalizer (:mod:`.normalize`: T1/T1a id rules, K2-A auth discovery from :mod:`.auth_discovery`)
turns a session into calls and results; a sink writes them as the Assay V2 trace (:mod:`.assay_v2`) or
the simple trace (:mod:`.simple`). :mod:`.importer` reads a session file and runs the lot. Named
"toolcalls" (not "trace") so the word "trace" stays free for OpenTelemetry.
"""

from __future__ import annotations

from mcpreel.toolcalls.assay_v2 import AssayV2Sink
from mcpreel.toolcalls.normalize import ImportOptions, ImportReport, normalize
from mcpreel.toolcalls.simple import SimpleSink

__all__ = ["TRACE_FORMATS", "ImportOptions", "ImportReport", "normalize"]

#: trace format name -> the sink that writes it (the formats table lists them as write-only rows)
TRACE_FORMATS = {"assay-v2": AssayV2Sink, "simple": SimpleSink}
