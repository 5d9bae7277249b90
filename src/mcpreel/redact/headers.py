"""Secret HTTP headers: ``Authorization``, ``Proxy-Authorization``, cookies and API-key headers.

The HTTP recorder replaces their values by :data:`~mcpreel.redact.secrets.MARKER` in every recorded
header set unless the user keeps secrets (``--keep-secrets``); :class:`~mcpreel.redact.engine.Redactor`
uses the same rule for the headers of a session it redacts. The rule's one copy is
:mod:`mcpreel._infra.credentials` (the readers, below this package, redact on read with it).
"""

from __future__ import annotations

from mcpreel._infra.credentials import SECRET_HEADERS, is_secret_header, redact_headers

__all__ = ["SECRET_HEADERS", "is_secret_header", "redact_headers"]
