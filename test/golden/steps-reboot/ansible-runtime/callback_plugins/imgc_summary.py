# One line per host of the inventory at the end of runtime.yml: converged, what
# its preflight found missing, how far it got, what needs a reboot; also when
# the run stopped early. At the end of decommission.yml: undone, failed (where
# and why), or not reached. Written by imgc (imgc compile --target ansible
# --runtime/--decommission); edit the definition, not this file.
from __future__ import annotations

import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: imgc_summary
type: aggregate
short_description: one line per host at the end of an imgc runtime run
description:
  - Prints, for every host of the inventory, the state the run left it in.
"""

PHASES = ["provision"]
KEYS = ("imgc_missing", "imgc_done", "imgc_reboot_required", "imgc_decommissioned")


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "imgc_summary"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self):
        super().__init__()
        self._hosts = []
        self._facts = {}
        self._failed = {}
        self._book = ""

    def v2_playbook_on_start(self, playbook):
        self._book = os.path.basename(getattr(playbook, "_file_name", "") or "")

    def v2_playbook_on_play_start(self, play):
        # The whole inventory, before serial batches restrict it.
        if not self._hosts:
            inventory = play.get_variable_manager()._inventory
            self._hosts = [h.name for h in inventory.get_hosts(play.hosts, ignore_restrictions=True)]

    def v2_runner_on_ok(self, result):
        facts = result._result.get("ansible_facts") or {}
        mine = self._facts.setdefault(result._host.get_name(), {})
        for key in KEYS:
            if key in facts:
                mine[key] = facts[key]

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not ignore_errors:
            msg = str(result._result.get("msg") or "failed").strip().splitlines()
            self._failed[result._host.get_name()] = "%s: %s" % (result._task.get_name(), msg[0] if msg else "failed")

    def v2_runner_on_unreachable(self, result):
        self._failed[result._host.get_name()] = "unreachable: %s" % str(result._result.get("msg") or "").strip()

    def v2_playbook_on_stats(self, stats):
        if self._book == "decommission.yml":
            return self._decommission_summary(stats)
        for host in self._hosts:
            facts = self._facts.get(host, {})
            missing = facts.get("imgc_missing")
            done = list(facts.get("imgc_done") or [])
            if missing:
                state = "preflight failed, untouched: missing " + ", ".join(missing)
            elif missing is None:
                state = "unreachable, or failed before its checks" if host in stats.processed else "not reached"
            elif host in self._failed:
                state = "failed after: " + (", ".join(done) or "nothing")
            elif done == PHASES:
                state = "converged"
            elif not done:
                state = "not reached: the run stopped before this host (max_fail_percentage exceeded, or every host of a batch failed)"
            else:
                state = "stopped after: " + ", ".join(done)
            reboot = facts.get("imgc_reboot_required") or []
            line = "imgc: %s: %s" % (host, state)
            if reboot:
                line += " (reboot required: %s)" % "; ".join(reboot)
            self._display.display(line)

    def _decommission_summary(self, stats):
        for host in self._hosts:
            done = self._facts.get(host, {}).get("imgc_decommissioned")
            if host in self._failed:
                state = "failed, the record kept: " + self._failed[host]
            elif done:
                state = "decommissioned (" + done + ")"
            elif host in stats.processed:
                state = "stopped before its undo finished"
            else:
                state = "not reached: the run stopped before this host (max_fail_percentage exceeded, or every host of a batch failed)"
            self._display.display("imgc: %s: %s" % (host, state))
