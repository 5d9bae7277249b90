"""Redaction of secrets in what is recorded (never in what is forwarded).

Headers: ``Authorization``, ``Proxy-Authorization``, cookies and API-key headers are replaced by
:data:`MARKER` in every recorded header set unless the user asks to keep secrets (:func:`redact_headers`,
used by the HTTP recorders).

Sessions (``mcpreel redact``, ``record --redact``): a :class:`Redactor` applies three kinds of rule to
every JSON value of a session (JSON-RPC messages, edit originals, transport context, other producers'
lines, stderr text, the session header) and to the server's ``command`` argv:

- **by key**: the value of a member whose name says secret (``token``, ``password``, ``authorization``,
  ``api_key``, ``secret``, ``cookie``, ``client_secret``, ``private_key``, ``GITHUB_TOKEN``, … — compared
  case-insensitively with ``-``/``_`` ignored, by suffix) becomes ``[REDACTED]``. Names that end in
  "token" but are not secrets (``progressToken``, ``nextPageToken``) are spared, and so are the property
  names of a JSON schema (a tool whose input has a ``password`` property keeps its schema);
- **by value pattern**: bearer and basic credentials, JWTs, ``sk-…`` API keys, AWS access keys, GitHub,
  GitLab, Slack, Google and Stripe tokens, private key blocks, URL passwords and secret URL parameters,
  ``NAME_TOKEN=…`` assignments, secret header lines — only the secret part of the string is replaced;
  a string that holds JSON (tool results often do) is redacted inside and written back;
- **the user's rules** (``--rules FILE``, JSON): more key names, more regexes, JSONPath expressions whose
  values are replaced whole, and JSONPath + regex pairs (see :func:`load_rules`).

With a key (``Rules.key``; ``mcpreel redact`` by default, :mod:`~mcpreel.redact.keys`) each secret
becomes a keyed marker, ``[REDACTED:rule:1a2b3c4d]`` (an HMAC of the secret: equal secrets stay equal,
different ones differ, and the mock can match a live request that carries it); without one, the plain
marker. JSONPath rules reach into JSON carried inside strings (a tool's text content), and
:meth:`Redactor.unmatched` names the user's rules that replaced nothing.

A value that already is a marker (plain or keyed) is not counted again, so redacting twice reports 0
the second time. A session is counted once whatever its writer reads of it (:meth:`Redactor.session`).
The redactor never changes its input: it returns copies (copy on write). A recording redacts through one
:class:`Redactor` passed to its pipeline (:class:`mcpreel.record.pipeline.Redaction`), so the run can
say how many secrets it replaced; there is no process-wide redactor.

The package, a module a concern: :mod:`~mcpreel.redact.secrets` (key rule, value patterns, the marker),
:mod:`~mcpreel.redact.headers` (secret HTTP headers), :mod:`~mcpreel.redact.rules` (the rules file),
:mod:`~mcpreel.redact.engine` (the :class:`Redactor`), :mod:`~mcpreel.redact.files` (``mcpreel redact``),
:mod:`~mcpreel.redact.keys` (keyed markers and where their key lives).
JSONPath lives in :mod:`mcpreel._infra.jsonpath`.

:func:`mcpreel.redact.files.redact_file` (the file verb) is not re-exported here: it reads and writes
files through :mod:`mcpreel.formats` and :mod:`mcpreel.convert`, which use this package's rules (URL
secrets on write), so importing the package must not import them back. Import it from its module.
"""

from mcpreel.redact.engine import Redactor
from mcpreel.redact.headers import SECRET_HEADERS, is_secret_header, redact_headers
from mcpreel.redact.rules import PathRule, Rules, load_rules, rules_from_dict
from mcpreel.redact.secrets import DEFAULT_PATTERNS, MARKER, Pattern, is_secret_key

__all__ = [
    "DEFAULT_PATTERNS",
    "MARKER",
    "SECRET_HEADERS",
    "PathRule",
    "Pattern",
    "Redactor",
    "Rules",
    "is_secret_header",
    "is_secret_key",
    "load_rules",
    "redact_headers",
    "rules_from_dict",
]
