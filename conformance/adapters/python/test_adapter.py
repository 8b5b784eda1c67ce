"""Tests of adapter.py as a template: importing it runs nothing, and the
protocol errors are the adapter's own, mapped from a library's exceptions in
one function (error_type)."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import adapter  # noqa: E402
import ojs_retry as lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class TemplateTest(unittest.TestCase):
    def test_import_reads_nothing(self):
        # Were the stdin loop run on import, the hello below would be answered.
        out = subprocess.run([sys.executable, "-c", "import adapter"], cwd=HERE,
                             input=b'{"id":1,"op":"hello"}\n', capture_output=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, b"")

    def test_run_as_a_program_answers(self):
        out = subprocess.run([sys.executable, "adapter.py"], cwd=HERE,
                             input=b'{"id":1,"op":"hello"}\n', capture_output=True, timeout=60)
        self.assertEqual(json.loads(out.stdout)["protocol"], 1)

    def test_malformed_request_is_the_adapters_own_error(self):
        with self.assertRaises(adapter.AdapterError) as cm:
            adapter.op_delay({"attempt": "3"})
        self.assertNotIsInstance(cm.exception, lib.OJSError)
        ans = adapter.handle_line(b'{"id":7,"op":"delay","attempt":"3"}')
        self.assertEqual(ans["error"]["type"], adapter.INVALID_REQUEST)

    def test_error_type_maps_a_librarys_exceptions(self):
        class YourPolicyError(Exception):
            pass

        def op_delay(req):
            raise YourPolicyError("max_attempts: must be at least 1")

        saved_op, saved_map = adapter._DISPATCH["delay"], adapter.error_type
        self.addCleanup(lambda: adapter._DISPATCH.__setitem__("delay", saved_op))
        self.addCleanup(lambda: setattr(adapter, "error_type", saved_map))
        adapter._DISPATCH["delay"] = op_delay
        line = b'{"id":8,"op":"delay","attempt":1}'
        # Not mapped: an internal error, named.
        ans = adapter.handle_line(line)
        self.assertEqual(ans["error"]["type"], adapter.INVALID_REQUEST)
        self.assertIn("internal error: YourPolicyError", ans["error"]["message"])
        # Mapped in error_type: the protocol's type, the library's message.
        adapter.error_type = lambda e: adapter.POLICY_INVALID if isinstance(e, YourPolicyError) else saved_map(e)
        ans = adapter.handle_line(line)
        self.assertEqual(ans, {"id": 8, "error": {"type": adapter.POLICY_INVALID,
                                                  "message": "max_attempts: must be at least 1"}})


if __name__ == "__main__":
    unittest.main()
