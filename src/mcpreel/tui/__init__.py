"""``mcpreel tui``: a terminal viewer of sessions, recorded (any readable format) or live (a proxy's control socket).

- :mod:`mcpreel.tui.entries`: records as rows, paired and filtered (no Textual);
- :mod:`mcpreel.tui.widgets`: the lazily drawn message list;
- :mod:`mcpreel.tui.app`: the viewer (list, detail, filter, save, export, held messages);
- :mod:`mcpreel.tui.screens`: its dialogs;
- :mod:`mcpreel.tui.live`: a running proxy as the viewer's feed, through :mod:`mcpreel.control`.

It speaks to the session model and the control client only, never to another command's code.
"""
