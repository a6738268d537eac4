"""The file-system edge: the only floor that opens files.

* ``containment``: untrusted reads (``SafeRoot``: a held directory descriptor, one
  component at a time, ``O_NOFOLLOW``, regular files only, bounded reads), and the
  operator's own writes (audit append, atomic replace, locks).
"""

__all__: list[str] = []
