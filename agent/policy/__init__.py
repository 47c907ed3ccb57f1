"""The approval seam, and the permission modes, path rules and tool-layer guard built on it.

- ``approval``: the seam itself: ``Decision``, ``Policy``, ``compose``, ``deny_bash_by_default``;
- ``targets``: which paths a call names (as its tool declares them) and where they lead (as
  safefs resolves them), relative to the workspace root;
- ``sensitive``: the built-in sensitive, protected-config and git path lists, and
  ``--allow-path``/``--deny-path`` rules, all compared case-folded;
- ``gitdirs``: no write makes or changes a git repository (under any name), or a config file
  or hooks path one names;
- ``run_record``: the run's session and audit log, kept out of the tools' reach;
- ``rules``: those rules, a library user's ``deny_paths``, and the redaction-placeholder refusal,
  as approval hooks;
- ``modes``: ``read-only``, ``edit``, ``ask``, ``full`` as approval hooks;
- ``ask``: the terminal approver behind ``ask``;
- ``guard``: secret redaction of every tool result, and the audit of every call;
- ``setup``: all of it put together, as the CLI uses it.
"""
