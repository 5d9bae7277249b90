"""What a check report may quote: environment dumps and secrets are redacted, ordinary answers are not."""

from __future__ import annotations

from mcpreel.check.redaction import redact_text
from mcpreel.redact import Redactor


def clean(text: str) -> str:
    return redact_text(text, Redactor())[0]


def test_env_output_lines():
    text = clean('{"type":"text","text":"PATH=/usr/bin:/bin\\nHOME=/root\\nNODE_OPTIONS=--max-old-space-size=4096"}')
    assert text == '{"type":"text","text":"PATH=[REDACTED]\\nHOME=[REDACTED]\\nNODE_OPTIONS=[REDACTED]"}'


def test_a_json_env_object_inside_a_json_string():
    text = clean('"text":"{\\n  \\"HOME\\": \\"/root\\",\\n  \\"npm_config_cache\\": \\"/root/.npm\\"\\n}"')
    assert "/root" not in text and '\\"npm_config_cache\\": \\"[REDACTED]\\"' in text


def test_secrets_by_the_project_patterns():
    assert clean("answer: Authorization: Bearer abcdefghijklmnop") == "answer: Authorization: Bearer [REDACTED]"


def test_ordinary_answers_stay():
    for text in ('{"result":{"content":[{"type":"text","text":"Echo: hi"}]}}',
                 'content[0].text is not JSON: The sum of 1 and 2 is 3.',
                 '{"name": "sdk-peer", "verbose": false}', "A=1 only one assignment"):
        assert clean(text) == text
