"""Every name the next MCP release's drafts put on the wire, in one place.

The release after 2026-07-28 is targeted for 2026-12-15; what it will say is still a set of drafts (the
Transports WG's ``proposals/`` and the spec repository's SEP pull requests). mcpreel records, serves and
judges what those drafts send *as they stand*, and every name it relies on lives here, grouped by draft,
each group naming the draft and the version (date or commit) it follows. When the release is cut, the
edit is here: a renamed key, header or code changes one constant, and every recorder, the mock, replay and
the renderers follow. Nothing here imports anything (the module sits below every other one).

docs/reference/drafts.md lists which draft and version each part of mcpreel follows.
"""

from __future__ import annotations

__all__ = [
    "STREAM_ID_FIELD",
    "REMINDER_EVENT",
    "MISSED_EVENT",
    "LAST_UPDATED_AT_FIELD",
    "EXPIRES_AT_FIELD",
    "AUTHORIZED_UNTIL_FIELD",
    "ACKNOWLEDGED_NOTIFICATION",
    "AUDIENCES",
    "BEHAVIOUR_META_KEYS",
    "DIGEST_CHANGED_CODES",
    "DIGEST_CHANGED_HTTP_STATUS",
    "DIGEST_META",
    "DIGEST_RESULT_FIELD",
    "DPOP_HEADER",
    "DPOP_NONCE_HEADER",
    "DPOP_REPLAY_NOTE",
    "DPOP_SCHEME",
    "EXPECTED_DIGEST_META",
    "FALLBACK_OUTPUT",
    "FORMATS",
    "H2_PREFACE",
    "H2_PROTOCOL",
    "KNOWN_DIGESTS_META",
    "LIFECYCLE_EVENTS",
    "LIFECYCLE_NOTIFICATION",
    "LIST_CURSOR_PARAMETER",
    "LIST_QUERY_PARAMETER",
    "LIST_SELECTORS",
    "LISTED_PRIMITIVES",
    "OUTPUTS_FIELD",
    "PARTIAL_RESULT_NOTIFICATION",
    "PARTIAL_RESULT_TOKEN",
    "REQUESTED_OUTPUTS_FIELD",
    "RESULT_VARIANTS_PROTOCOL",
    "STALE_DIGESTS_FIELD",
    "STALE_DIGESTS_META",
    "STDIO_V2_AUTHORITY",
    "STDIO_V2_PATH",
    "STDIO_V2_TRANSPORT",
    "TASK_PROGRESS_FIELD",
    "TASK_PROGRESS_TOTAL_FIELD",
    "TASK_STATUS_MESSAGE_FIELD",
    "TASK_STATUS_NOTIFICATION",
    "TRACEPARENT_HEADER",
    "TRACESTATE_HEADER",
    "carries_dpop",
    "is_dpop_authorization",
    "list_method_of_selector",
]

# -- Per-primitive digests and conditional requests ------------------------------------------------------
# transports-wg proposals/XXXX-primitive-digests-companion.md ("SEP-XXXX: Per-Primitive Digests and
# Conditional Requests", created 2026-09-04, commit 089f22f0). A Tool / Prompt / Resource / ResourceTemplate
# carries its digest in its own ``_meta``; a tools/call, prompts/get or resources/read carries the digest
# of the definition the client used in its request ``_meta``; a stale one is refused with DigestChangedError
# (code DIGEST_CHANGED, allocation pending) before anything runs, as HTTP 409 on Streamable HTTP.

#: a primitive's own digest, in the Tool / Prompt / Resource / ResourceTemplate object's ``_meta``
DIGEST_META = "io.modelcontextprotocol/digest"
#: the digest a conditional request was made against, in the request's ``params._meta``
EXPECTED_DIGEST_META = "io.modelcontextprotocol/expectedDigest"
#: the HTTP status of a DigestChangedError on Streamable HTTP
DIGEST_CHANGED_HTTP_STATUS = 409
#: the list methods whose entries carry digests, and the member each result lists them under
LISTED_PRIMITIVES: dict[str, str] = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}

# -- Definition (collection) digests --------------------------------------------------------------------
# transports-wg proposals/XXXX-definition-digests.md ("SEP-XXXX: Definition Digests", created 2026-09-04,
# commit 28905b22): the successor shape, one digest per collection on CacheableResult, the client's known
# digests keyed by method in request ``_meta``, and the stale methods in result ``_meta`` (honor and
# signal) or in error ``data`` (reject). The draft allocates no code; its reference implementation (the HF
# MCP server) rejects with -32987.

#: a CacheableResult's collection digest (a result member, beside ttlMs and cacheScope)
DIGEST_RESULT_FIELD = "digest"
#: the client's known digests, ``{method: digest}``, in a request's ``params._meta``
KNOWN_DIGESTS_META = "io.modelcontextprotocol/knownDigests"
#: the methods whose known digests were stale, in a served result's ``_meta`` (honor and signal)
STALE_DIGESTS_META = "io.modelcontextprotocol/staleDigests"
#: the same list in a rejection's ``error.data``
STALE_DIGESTS_FIELD = "staleDigests"
#: JSON-RPC error codes that mean "the definitions changed": DIGEST_CHANGED has no number yet in either
#: draft; -32987 is what the definition-digests draft's reference implementation sends. Put the allocated
#: code here when the release names it.
DIGEST_CHANGED_CODES: frozenset[int] = frozenset({-32987})

#: ``io.modelcontextprotocol/`` ``_meta`` keys the drafts give behaviour: never protocol plumbing (kept in
#: era translations, matched by serve, compared by replay and diff: :func:`mcpreel.eras.is_protocol_meta_key`)
BEHAVIOUR_META_KEYS = frozenset({DIGEST_META, EXPECTED_DIGEST_META, KNOWN_DIGESTS_META, STALE_DIGESTS_META})

# -- Lists over HTTP GET with caching ---------------------------------------------------------------------
# transports-wg proposals/XXXX-http-list-retrieval-and-caching.md ("SEP-XXXX: HTTP Retrieval and Caching
# of MCP Lists", exploratory draft created 2026-09-08, commit 8e2ea64a). ``GET <endpoint>?mcp_list=tools``
# (optional ``cursor``) answers the bare list result object (no JSON-RPC envelope) with ETag /
# Cache-Control / Vary; ``If-None-Match`` may give ``304 Not Modified`` with no body. The draft calls the
# selectors illustrative.

#: the query parameter that selects a list representation
LIST_QUERY_PARAMETER = "mcp_list"
#: the query parameter of a later page
LIST_CURSOR_PARAMETER = "cursor"
#: selector -> the JSON-RPC list method it stands for
LIST_SELECTORS: dict[str, str] = {
    "tools": "tools/list",
    "prompts": "prompts/list",
    "resources": "resources/list",
    "resource-templates": "resources/templates/list",
}


def list_method_of_selector(selector: str | None) -> str | None:
    """The list method a ``mcp_list`` selector stands for (None for an unknown one: kept, never guessed)."""
    return LIST_SELECTORS.get(selector or "")


# -- DPoP ---------------------------------------------------------------------------------------------------
# SEP-1932 "DPoP Profile for MCP" (modelcontextprotocol/modelcontextprotocol#1932, open, review of
# 2026-08-31; conformance client scenarios #394 merged 2026-07): RFC 9449 as is. Every request carries
# ``Authorization: DPoP <token>`` and a fresh ``DPoP: <proof JWT>`` (iat within +/-5 min, htm, htu, jti);
# a server may hand out ``DPoP-Nonce``; a refusal is ``401`` with ``WWW-Authenticate: DPoP ...``.

#: the per-request proof header (a signed JWT: a credential, redacted by default)
DPOP_HEADER = "dpop"
#: the server-chosen nonce header (not a credential: it proves nothing without the key)
DPOP_NONCE_HEADER = "dpop-nonce"
#: the Authorization scheme of a DPoP-bound token
DPOP_SCHEME = "DPoP"


def is_dpop_authorization(value: object) -> bool:
    """Whether an ``Authorization`` header value (or a ``WWW-Authenticate`` challenge) uses the DPoP scheme."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return text[:4].lower() == "dpop" and text[4:5] in ("", " ")


def carries_dpop(ctx: object) -> bool:
    """Whether a recorded HTTP request (its record's ``ctx``, with ``headers``) was DPoP-bound: it carried a
    ``DPoP`` proof header or an ``Authorization: DPoP`` token (the header's name survives redaction)."""
    headers = ctx.get("headers") if isinstance(ctx, dict) else None
    if not isinstance(headers, dict):
        return False
    for name, value in headers.items():
        low = str(name).lower()
        if low == DPOP_HEADER or (low == "authorization" and is_dpop_authorization(value)):
            return True
    return False


#: what replay says of a DPoP-bound recording (one line; see mcpreel.replay)
DPOP_REPLAY_NOTE = ("recorded with DPoP-bound credentials (SEP-1932): each request's proof was signed with the "
                    "client's private key for that one request and is not kept (redacted), so it cannot be "
                    "replayed; a target that enforces DPoP needs a live key (answers 401 'WWW-Authenticate: "
                    "DPoP') -- replay against a server that does not enforce it, or with fresh credentials")


# -- Trace context in HTTP headers ------------------------------------------------------------------------
# transports-wg proposals/XXXX-transport-native-trace-context.md (2026-09): on HTTP the W3C headers are
# authoritative over the ``_meta`` carriers.

TRACEPARENT_HEADER = "traceparent"
TRACESTATE_HEADER = "tracestate"

# -- Result variants by audience ---------------------------------------------------------------------------
# SEP-3279 (modelcontextprotocol/modelcontextprotocol#3279, open): a request's ``requestedOutputs``; a
# result's ``outputs`` per audience instead of ``content`` / ``structuredContent`` (kept for older versions).

# (File seps/0000-negotiated-tool-result-variants.md, created 2026-08-18, target revision "2026-12-01".)
# ``outputs`` is ``[{audience, format, content | structuredContent}]``; its order has no meaning; without
# ``requestedOutputs`` the server returns the ``assistant/content`` fallback.

REQUESTED_OUTPUTS_FIELD = "requestedOutputs"
OUTPUTS_FIELD = "outputs"
#: the protocol revision the result variants draft targets
RESULT_VARIANTS_PROTOCOL = "2026-12-01"
#: the core audiences and formats (extension audiences are kept as they come)
AUDIENCES = ("assistant", "user", "programmatic")
FORMATS = ("content", "structured")
#: the fallback output: what a client that asked for nothing gets
FALLBACK_OUTPUT = ("assistant", "content")

# -- Incremental tool results -----------------------------------------------------------------------------
# SEP-2998 "Partial Tool Results" (modelcontextprotocol/modelcontextprotocol#2998, draft opened 2026-07-02):
# ordered chunks during an in-flight tools/call, the final CallToolResult the sole authoritative answer.

# The request opts in with ``_meta.partialResultToken`` (and ``partialResults`` in its client capabilities);
# each chunk's params: ``partialResultToken``, ``seq`` (from 0), ``content``, ``structuredContent``,
# ``final``. (seps/0000-partial-tool-results.md; the pull request was reported closed unmerged on
# 2026-09-22, pending the working group: kept here as the last wire shape proposed.)

PARTIAL_RESULT_NOTIFICATION = "notifications/tools/partial_result"
PARTIAL_RESULT_TOKEN = "partialResultToken"

# -- Tasks are progress --------------------------------------------------------------------------------------
# transports-wg proposals/0000-tasks-are-progress.md ("SEP-0000: Tasks are Progress", proposal created
# 2026-01-30, PR transports-wg#11): a ``Task`` (in a CreateTaskResult's ``task``, a ``tasks/get`` answer, a
# ``notifications/tasks/status``) gains ``progress`` and ``progressTotal`` (monotonic; floats allowed);
# ``notifications/progress`` and ``_meta.progressToken`` are removed. mcpreel reads both carriers as one
# (:attr:`mcpreel.operations.walk.Operation.progress`), so a session without progress notifications reads
# the same as one with them.

#: a Task's completed amount of work
TASK_PROGRESS_FIELD = "progress"
#: a Task's total amount of work (optional; it may grow)
TASK_PROGRESS_TOTAL_FIELD = "progressTotal"
#: a Task's human-readable status (the 2025-11-25 Tasks field that mirrors progress's ``message``)
TASK_STATUS_MESSAGE_FIELD = "statusMessage"
#: the notification a receiver sends when a task's status (and, with this draft, progress) changes
TASK_STATUS_NOTIFICATION = "notifications/tasks/status"

# -- Listen (subscription) lifecycle ------------------------------------------------------------------------
# transports-wg proposals/XXXX-subscription-lifecycle.md (2026-09): server-issued ``streamId``, client
# ``expiresAt``, opt-in ``lifecycle: true``, a paused state, ``lastUpdatedAt``.

# (Created 2026-09-29, commit 9d19cd9c; requires the authorization-lifetime draft.) The acknowledgment
# (``notifications/subscriptions/acknowledged``) carries ``streamId``, ``expiresAt``, ``lifecycle: true``
# and ``lastUpdatedAt``; each lifecycle notification a ``type`` and ``lastUpdatedAt``, a reminder
# ``authorizedUntil`` and ``reason`` (past ``authorizedUntil``: the stream is paused), ``access_reduced``
# ``removed``. Unknown types are kept and shown as they came.

LIFECYCLE_NOTIFICATION = "notifications/subscriptions/lifecycle"
ACKNOWLEDGED_NOTIFICATION = "notifications/subscriptions/acknowledged"
#: lifecycle events; ``missed`` means notifications were lost (data loss)
LIFECYCLE_EVENTS = ("reauthorization_required", "access_reduced", "missed")
MISSED_EVENT = "missed"
REMINDER_EVENT = "reauthorization_required"
STREAM_ID_FIELD = "streamId"
EXPIRES_AT_FIELD = "expiresAt"
LAST_UPDATED_AT_FIELD = "lastUpdatedAt"
AUTHORIZED_UNTIL_FIELD = "authorizedUntil"

# -- HTTP over stdio (``stdio-v2``) ---------------------------------------------------------------------------
# transports-wg proposals/http-over-stdio/: negotiation-decision.md (commit 0d736522: a new transport named
# ``stdio-v2``, selected by the user's configuration, speaking its framing from the first byte) and
# communication-channel-decision.md (commit a3560b7f: HTTP/2, RFC 9113, over the child's stdin/stdout, with
# prior knowledge, carrying Streamable HTTP; the exact wire format is not final). The roadmap
# (roadmaps/2026-12-15.md, track 2 "HTTP over STDIO") still lists HTTP/1.1-vs-HTTP/2 as open.

#: the transport identifier a client configuration selects
STDIO_V2_TRANSPORT = "stdio-v2"
#: the HTTP/2 client connection preface (RFC 9113 section 3.4): the first bytes a stdio-v2 client writes
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: the protocol token (ALPN's name for HTTP/2; on a pipe nothing negotiates it: prior knowledge)
H2_PROTOCOL = "h2"
#: the endpoint path a stdio-v2 peer posts to: the drafts name none, so Streamable HTTP's convention
STDIO_V2_PATH = "/mcp"
#: the authority a stdio-v2 peer sends (a pipe has no host; the drafts name none)
STDIO_V2_AUTHORITY = "localhost"
