#!/usr/bin/env python3
"""Tests of model_server.py: the real server, started as a process, spoken to
over HTTP in each protocol it serves. Run with `python3 -m unittest -v
model_server_test` from this folder (ctest does: live_model_server)."""

import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "model_server.py")

# One turn of each kind a scenario can hold.
SCENARIO = {
    "turns": [
        {"text": "Reading the file.",
         "tool_calls": [{"name": "read", "arguments": {"path": "${CWD}/calc.py", "tag": "${TAG}"}}],
         "usage": {"input_tokens": 1000, "output_tokens": 50, "cached_input_tokens": 400}},
        {"tool_calls": [{"name": "apply_patch", "input": "*** Begin Patch\n*** End Patch\n"}]},
        {"text": "Slow but done.", "delay_seconds": 0.2},
        {"error": {"status": 500, "message": "scripted overload"}},
        {"error": {"status": 400, "message": "scripted refusal"}},
        {"hang": True},
    ]
}

SYSTEM_PROMPT = "You are a coding agent.\nWorking directory: %s\nBe brief."


def parse_sse(raw):
    """[(event or None, data as JSON or the raw string)] from an SSE body."""
    events = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        text = "\n".join(data)
        try:
            events.append((event, json.loads(text)))
        except json.JSONDecodeError:
            events.append((event, text))
    return events


class Server:
    def __init__(self, scenario, *args):
        self.dir = tempfile.TemporaryDirectory()
        self.root = os.path.realpath(self.dir.name)
        self.scenario = os.path.join(self.root, "scenario.json")
        self.log = os.path.join(self.root, "requests.jsonl")
        with open(self.scenario, "w") as f:
            json.dump(scenario, f)
        self.process = subprocess.Popen(
            [sys.executable, SERVER, "--scenario", self.scenario, "--log", self.log, "--port", "0"] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("LISTENING "):
            self.process.kill()
            raise RuntimeError("the server did not start: %r %s" % (line, self.process.stderr.read()))
        self.port = int(line.split()[1])

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.process.stderr.close()
        self.dir.cleanup()

    def request(self, method, path, body=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.getheader("Content-Type"), response.read()
        finally:
            connection.close()

    def post(self, path, body, timeout=10):
        return self.request("POST", path, body, timeout)

    def logged(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]


def anthropic_body(assistant_turns, cwd="/work/project", stream=True, tools=True):
    messages = [{"role": "user", "content": "fix it"}]
    for _ in range(assistant_turns):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "..."}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]})
    body = {"model": "claude-test", "stream": stream, "messages": messages,
            "system": [{"type": "text", "text": SYSTEM_PROMPT % cwd}]}
    if tools:
        body["tools"] = [{"name": "read", "input_schema": {"type": "object"}}]
    return body


def chat_body(assistant_turns, stream=True):
    messages = [{"role": "system", "content": SYSTEM_PROMPT % "/work/project"}, {"role": "user", "content": "fix it"}]
    for _ in range(assistant_turns):
        messages.append({"role": "assistant", "content": "...", "tool_calls": []})
        messages.append({"role": "tool", "tool_call_id": "x", "content": "ok"})
    return {"model": "gpt-test", "stream": stream, "messages": messages,
            "stream_options": {"include_usage": True},
            "tools": [{"type": "function", "function": {"name": "read", "parameters": {}}}]}


def responses_body(model_turns):
    items = [{"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "<environment_context><cwd>/work/project</cwd></environment_context>"}]}]
    for _ in range(model_turns):
        items.append({"type": "reasoning", "summary": []})
        items.append({"type": "function_call", "name": "read", "arguments": "{}", "call_id": "c"})
        items.append({"type": "function_call_output", "call_id": "c", "output": "ok"})
    return {"model": "gpt-5.5", "stream": True, "input": items,
            "tools": [{"type": "function", "name": "read", "parameters": {}}]}


def gemini_body(model_turns):
    contents = [{"role": "user", "parts": [{"text": "- **Workspace Directories:**\n  - /work/project\n"}]}]
    for _ in range(model_turns):
        contents.append({"role": "model", "parts": [{"functionCall": {"name": "read", "args": {}}}]})
        contents.append({"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {}}}]})
    return {"contents": contents, "tools": [{"functionDeclarations": [{"name": "read"}]}]}


class ModelServerTest(unittest.TestCase):
    def setUp(self):
        self.server = Server(SCENARIO, "--var", "TAG=tagged value")

    def tearDown(self):
        self.server.stop()

    # --- where it listens ------------------------------------------------------

    def test_listens_on_loopback_only(self):
        port_hex = "%04X" % self.server.port
        listening = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table) as f:
                for line in f.readlines()[1:]:
                    local, state = line.split()[1], line.split()[3]
                    if state == "0A" and local.endswith(":" + port_hex):
                        listening.append(local)
        self.assertEqual(listening, ["0100007F:" + port_hex])

    # --- Anthropic Messages ----------------------------------------------------

    def test_anthropic_stream_carries_text_then_tool_call_with_variables_substituted(self):
        status, kind, raw = self.server.post("/v1/messages?beta=true", anthropic_body(0))
        self.assertEqual((status, kind), (200, "text/event-stream"))
        events = parse_sse(raw)
        names = [e for e, _ in events]
        self.assertEqual(names[0], "message_start")
        self.assertEqual(names[-2:], ["message_delta", "message_stop"])
        blocks = [d["content_block"] for e, d in events if e == "content_block_start"]
        self.assertEqual([b["type"] for b in blocks], ["text", "tool_use"])
        self.assertEqual(blocks[1]["name"], "read")
        deltas = [d["delta"] for e, d in events if e == "content_block_delta"]
        self.assertEqual(deltas[0], {"type": "text_delta", "text": "Reading the file."})
        self.assertEqual(json.loads(deltas[1]["partial_json"]),
                         {"path": "/work/project/calc.py", "tag": "tagged value"})
        start = events[0][1]["message"]["usage"]
        # Anthropic's input_tokens leaves the cache reads out.
        self.assertEqual((start["input_tokens"], start["cache_read_input_tokens"]), (600, 400))
        delta = [d for e, d in events if e == "message_delta"][0]
        self.assertEqual(delta["delta"]["stop_reason"], "tool_use")
        self.assertEqual(delta["usage"]["output_tokens"], 50)

    def test_anthropic_json_answer_when_not_streaming(self):
        status, kind, raw = self.server.post("/v1/messages", anthropic_body(0, stream=False))
        self.assertEqual((status, kind), (200, "application/json"))
        message = json.loads(raw)
        self.assertEqual(message["type"], "message")
        self.assertEqual([c["type"] for c in message["content"]], ["text", "tool_use"])
        self.assertEqual(message["content"][1]["input"]["path"], "/work/project/calc.py")
        self.assertEqual(message["stop_reason"], "tool_use")

    def test_the_turn_is_the_number_of_assistant_turns_in_the_conversation(self):
        _, _, raw = self.server.post("/v1/messages", anthropic_body(2, stream=False))
        message = json.loads(raw)
        self.assertEqual(message["content"], [{"type": "text", "text": "Slow but done."}])
        self.assertEqual(message["stop_reason"], "end_turn")
        # The same request again gets the same answer: a retry is not a new turn.
        _, _, again = self.server.post("/v1/messages", anthropic_body(2, stream=False))
        self.assertEqual(json.loads(again)["content"], message["content"])

    def test_past_the_last_turn_the_answer_is_done(self):
        _, _, raw = self.server.post("/v1/messages", anthropic_body(9, stream=False))
        self.assertEqual(json.loads(raw)["content"], [{"type": "text", "text": "Done."}])

    def test_a_request_without_tools_gets_a_generic_answer(self):
        _, _, raw = self.server.post("/v1/messages", anthropic_body(3, stream=False, tools=False))
        self.assertEqual(json.loads(raw)["content"], [{"type": "text", "text": "OK"}])
        self.assertEqual(self.server.logged()[-1]["turn"], "generic")

    def test_anthropic_errors_have_anthropics_shape(self):
        status, _, raw = self.server.post("/v1/messages", anthropic_body(3, stream=True))
        self.assertEqual(status, 500)
        self.assertEqual(json.loads(raw), {"type": "error", "error": {"type": "api_error", "message": "scripted overload"}})
        status, _, raw = self.server.post("/v1/messages", anthropic_body(4, stream=True))
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(raw)["error"], {"type": "invalid_request_error", "message": "scripted refusal"})

    def test_count_tokens_and_model_list(self):
        status, _, raw = self.server.post("/v1/messages/count_tokens", anthropic_body(0))
        self.assertEqual((status, json.loads(raw)), (200, {"input_tokens": 100}))
        status, _, raw = self.server.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(raw)["data"][0]["id"], "scripted-model")

    # --- OpenAI Responses ------------------------------------------------------

    def test_responses_stream_function_call_then_custom_tool_call(self):
        status, kind, raw = self.server.post("/v1/responses", responses_body(0))
        self.assertEqual((status, kind), (200, "text/event-stream"))
        events = parse_sse(raw)
        self.assertEqual([e for e, _ in events][:2], ["response.created", "response.in_progress"])
        self.assertEqual([d["sequence_number"] for _, d in events], list(range(len(events))))
        done = [d["item"] for e, d in events if e == "response.output_item.done"]
        self.assertEqual([i["type"] for i in done], ["message", "function_call"])
        self.assertEqual(done[0]["content"][0]["text"], "Reading the file.")
        self.assertEqual(json.loads(done[1]["arguments"])["path"], "/work/project/calc.py")
        completed = events[-1][1]["response"]
        self.assertEqual(events[-1][0], "response.completed")
        self.assertEqual(completed["usage"]["input_tokens"], 1000)
        self.assertEqual(completed["usage"]["input_tokens_details"]["cached_tokens"], 400)
        self.assertEqual(completed["usage"]["output_tokens"], 50)

        # One model turn (reasoning + function call) later: the freeform apply_patch.
        events = parse_sse(self.server.post("/v1/responses", responses_body(1))[2])
        done = [d["item"] for e, d in events if e == "response.output_item.done"]
        self.assertEqual(done, [dict(done[0], type="custom_tool_call", name="apply_patch",
                                     input="*** Begin Patch\n*** End Patch\n", status="completed")])

    def test_responses_error_has_openais_shape(self):
        status, _, raw = self.server.post("/v1/responses", responses_body(4))
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(raw)["error"]["message"], "scripted refusal")
        self.assertEqual(json.loads(raw)["error"]["type"], "invalid_request_error")

    # --- OpenAI Chat Completions -----------------------------------------------

    def test_chat_stream_with_usage_and_done(self):
        status, kind, raw = self.server.post("/v1/chat/completions", chat_body(0))
        self.assertEqual((status, kind), (200, "text/event-stream"))
        events = parse_sse(raw)
        self.assertEqual(events[-1], (None, "[DONE]"))
        chunks = [d for _, d in events[:-1]]
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]),
                         "Reading the file.")
        calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
                 if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0]["function"]["name"], "read")
        self.assertEqual(json.loads(calls[0]["function"]["arguments"])["path"], "/work/project/calc.py")
        finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
        self.assertEqual(finishes, ["tool_calls"])
        self.assertEqual(chunks[-1]["usage"], {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
                                               "prompt_tokens_details": {"cached_tokens": 400}})

    def test_chat_json_answer_and_the_freeform_call_it_cannot_carry(self):
        status, kind, raw = self.server.post("/v1/chat/completions", chat_body(0, stream=False))
        self.assertEqual((status, kind), (200, "application/json"))
        choice = json.loads(raw)["choices"][0]
        self.assertEqual(choice["message"]["content"], "Reading the file.")
        self.assertEqual(choice["message"]["tool_calls"][0]["function"]["name"], "read")
        # Turn 1 is a custom tool call, which only OpenAI Responses has.
        status, _, raw = self.server.post("/v1/chat/completions", chat_body(1, stream=False))
        self.assertEqual(status, 400)
        self.assertIn("OpenAI Responses only", json.loads(raw)["error"]["message"])

    def test_chat_server_error(self):
        status, _, raw = self.server.post("/v1/chat/completions", chat_body(3))
        self.assertEqual(status, 500)
        self.assertEqual(json.loads(raw)["error"], {"message": "scripted overload", "type": "server_error",
                                                    "param": None, "code": None})

    # --- Gemini ----------------------------------------------------------------

    def test_gemini_generate_content_and_its_stream(self):
        path = "/v1beta/models/gemini-2.5-pro:generateContent"
        status, kind, raw = self.server.post(path, gemini_body(0))
        self.assertEqual((status, kind), (200, "application/json"))
        answer = json.loads(raw)
        parts = answer["candidates"][0]["content"]["parts"]
        self.assertEqual(parts[0], {"text": "Reading the file."})
        self.assertEqual(parts[1]["functionCall"]["args"]["path"], "/work/project/calc.py")
        self.assertEqual(answer["usageMetadata"]["promptTokenCount"], 1000)
        self.assertEqual(answer["usageMetadata"]["cachedContentTokenCount"], 400)

        path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        status, kind, raw = self.server.post(path, gemini_body(2))
        self.assertEqual((status, kind), (200, "text/event-stream"))
        events = parse_sse(raw)
        self.assertEqual(len(events), 1)
        self.assertEqual(events[0][1]["candidates"][0]["content"]["parts"], [{"text": "Slow but done."}])

    def test_gemini_error_has_googles_shape(self):
        status, _, raw = self.server.post("/v1beta/models/m:streamGenerateContent?alt=sse", gemini_body(4))
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(raw), {"error": {"code": 400, "message": "scripted refusal",
                                                     "status": "INVALID_ARGUMENT"}})

    # --- hang, log, stop ---------------------------------------------------------

    def test_a_hanging_turn_never_answers_and_blocks_nothing_else(self):
        with self.assertRaises(OSError):  # socket.timeout is an OSError
            self.server.post("/v1/messages", anthropic_body(5, stream=True), timeout=1)
        status, _, _ = self.server.post("/v1/messages", anthropic_body(0, stream=False))
        self.assertEqual(status, 200)
        actions = [e.get("action") for e in self.server.logged()]
        self.assertEqual(actions, ["hang", "answer"])
        # It still stops at once when told to, with the request hanging.
        self.server.process.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.process.wait(timeout=10), 0)

    def test_every_request_is_logged_with_its_turn_and_where_the_cli_works(self):
        self.server.post("/v1/messages", anthropic_body(0, cwd="/srv/checkout"))
        self.server.post("/v1/chat/completions", chat_body(3))
        self.server.post("/v1/messages", anthropic_body(1, tools=False))
        self.server.request("GET", "/health")
        log = self.server.logged()
        self.assertEqual([e["seq"] for e in log], [1, 2, 3, 4])
        self.assertEqual([(e.get("protocol"), e.get("turn"), e.get("action")) for e in log],
                         [("anthropic", 0, "answer"), ("chat", 3, "error"), ("anthropic", "generic", None),
                          (None, None, None)])
        self.assertEqual(log[0]["cwd"], "/srv/checkout")
        self.assertEqual(log[0]["tools"], ["read"])
        self.assertEqual(log[0]["model"], "claude-test")
        self.assertEqual(log[3]["path"], "/health")

    def test_an_unreadable_body_is_refused(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        connection.request("POST", "/v1/messages", body=b"{not json", headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        self.assertEqual(response.status, 400)
        self.assertIn("unreadable request", json.loads(response.read())["error"]["message"])
        connection.close()


class ConfinementTest(unittest.TestCase):
    def test_a_cli_that_works_outside_the_allowed_directory_gets_an_error_not_a_tool_call(self):
        allowed = tempfile.TemporaryDirectory()
        server = Server(SCENARIO, "--var", "TAG=x", "--cwd-within", allowed.name)
        try:
            status, _, raw = server.post("/v1/messages", anthropic_body(0, cwd="/etc", stream=False))
            self.assertEqual(status, 400)
            self.assertIn("outside", json.loads(raw)["error"]["message"])
            inside = os.path.join(os.path.realpath(allowed.name), "repo")
            status, _, raw = server.post("/v1/messages", anthropic_body(0, cwd=inside, stream=False))
            self.assertEqual(status, 200)
            self.assertEqual(json.loads(raw)["content"][1]["input"]["path"], inside + "/calc.py")
            # A turn with no ${CWD} is answered wherever the CLI is.
            status, _, _ = server.post("/v1/messages", anthropic_body(2, cwd="/etc", stream=False))
            self.assertEqual(status, 200)
        finally:
            server.stop()
            allowed.cleanup()


class BadScenarioTest(unittest.TestCase):
    def run_server(self, scenario, *args):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                f.write(scenario if isinstance(scenario, str) else json.dumps(scenario))
            result = subprocess.run([sys.executable, SERVER, "--scenario", path, "--log", os.path.join(d, "l")] +
                                    list(args), capture_output=True, text=True, timeout=30)
        return result.returncode, result.stdout, result.stderr

    def test_each_mistake_is_named_and_the_server_does_not_start(self):
        cases = [
            ("{", [], "not JSON"),
            ({"turn": []}, [], '"turns" list'),
            ({"turns": [{"txt": "hi"}]}, [], "unknown keys ['txt']"),
            ({"turns": [{"error": {"status": 200}}]}, [], "from 400 to 599"),
            ({"turns": [{"tool_calls": [{"name": "x"}]}]}, [], 'needs "arguments"'),
            ({"turns": [{"usage": {"input_tokens": 1, "cached_input_tokens": 5}}]}, [], "more cached"),
            ({"turns": [{"text": "${NOPE}"}]}, [], "${NOPE}"),
            ({"turns": []}, ["--var", "CWD=/x"], "cannot be set"),
            ({"turns": []}, ["--var", "no-equals"], "NAME=VALUE"),
        ]
        for scenario, args, message in cases:
            with self.subTest(message=message):
                code, out, err = self.run_server(scenario, *args)
                self.assertEqual(code, 2, err)
                self.assertEqual(out, "")
                self.assertIn(message, err)


if __name__ == "__main__":
    unittest.main()
