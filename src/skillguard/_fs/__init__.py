"""The file-system edge: the only floor that opens files.

Untrusted reads (what a hostile file, folder or name can reach; none of these writes):

* ``paths``: path strings checked before any system call (``split_name`` for untrusted
  names, ``operator_path`` for the operator's), joined and shown; no system call;
* ``walk``: the held root descriptor and the walk to a folder beneath it (``openat2``
  or one ``O_NOFOLLOW`` component at a time), ``Resolver``;
* ``containment``: ``SafeRoot``, reads (``fstat`` of the opened descriptor, bounded)
  and listings (bounded, a typed reason for every entry not taken) beneath it;
* ``errors``: the OS errors met there, as typed errors.

The operator's own (paths the operator gave, resolved by the OS):

* ``operator``: the operator's files read by path (a key, a policy, an audit log
  streamed a line at a time);
* ``write``: the operator's files written: atomic replacement, locks, the audit log's
  appender, new files, the output folder of composed agents; it never lists an
  untrusted tree;
* ``terminal``: the controlling terminal, where a human is asked.
"""

__all__: list[str] = []
