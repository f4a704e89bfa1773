#!/usr/bin/env python3
"""A scripted model server for racing real agent CLIs offline.

It speaks just enough of four model APIs for the CLIs hydra drives:

  Anthropic Messages       POST /v1/messages (SSE when "stream" is true, else JSON),
                           POST /v1/messages/count_tokens
  OpenAI Responses         POST /v1/responses (SSE)
  OpenAI Chat Completions  POST /v1/chat/completions (SSE when "stream" is true, else JSON)
  Gemini                   POST /v1beta/models/M:generateContent (JSON),
                           POST /v1beta/models/M:streamGenerateContent?alt=sse (SSE),
                           POST /v1beta/models/M:countTokens
  model lists              GET /v1/models, GET /v1beta/models

It listens on 127.0.0.1 only and prints "LISTENING <port>" once it accepts
connections (--port 0 picks a free port).

A scenario is a JSON file {"turns": [TURN, ...]}. The answer to a request is
chosen from the request alone: the turn index is the number of model turns
already in the conversation it carries, so a CLI that retries a request gets
the same turn again, and several conversations can be served at once. A
request that offers no tools (a title, a summary, a quota probe) is not part
of the script: it gets a short generic answer. Past the last turn the answer
is the text "Done.".

TURN is an object with any of:
  "text": "..."                    assistant text (first in the answer)
  "tool_calls": [CALL, ...]        CALL = {"name": N, "arguments": {...}} (a function call),
                                   or {"name": N, "input": "..."} (a freeform custom tool call,
                                   OpenAI Responses only: codex's apply_patch)
  "usage": {"input_tokens": I, "output_tokens": O, "cached_input_tokens": C}
                                   what the answer reports (default 100 / 20 / 0); I counts
                                   every prompt token, the C cached ones among them (Anthropic's
                                   input_tokens, which leaves cache reads out, is then I - C)
  "delay_seconds": S               a slow model: wait S seconds, then answer
and, instead of an answer:
  "error": {"status": 500, "message": "..."}
                                   an HTTP error in the protocol's own error shape (500 is one
                                   a CLI retries; 400 is one it must not)
  "hang": true                     accept the request and never answer

In every string of a scenario, ${NAME} is replaced by --var NAME=VALUE, and
${CWD} by the working directory the CLI told the model it is in (read from
the request, as a real model would), so a scripted edit lands wherever the
CLI believes its project is. With --cwd-within DIR, a CLI that believes it is
outside DIR gets an error instead of a tool call.

Every request is appended to the --log file as one JSON line: seq, time,
method, path, protocol, model, stream, tools (the names offered), turn (the
index, or "generic" / "count_tokens"), and for scripted turns action
("answer", "error", "hang", "scenario error") and cwd (where the CLI said it
works, or null).
"""

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_USAGE = {"input_tokens": 100, "output_tokens": 20, "cached_input_tokens": 0}
GENERIC_TEXT = "OK"
FINAL_TEXT = "Done."
TURN_KEYS = {"text", "tool_calls", "usage", "delay_seconds", "error", "hang"}
PROTOCOLS = ("anthropic", "responses", "chat", "gemini")

# How each CLI tells the model where it works, in the order they are tried.
CWD_PATTERNS = [
    re.compile(r"<cwd>([^<\n]+)</cwd>"),                       # codex
    re.compile(r"(?i)working directory: *([^\n]+)"),            # claude, opencode
    re.compile(r"Workspace Directories:\**\n\s*- *([^\n]+)"),         # gemini
]


class ScenarioError(Exception):
    pass


def load_scenario(path, variables):
    """Reads and checks a scenario; ${NAME} for --var names is replaced now, ${CWD} per request."""
    with open(path, encoding="utf-8") as f:
        try:
            scenario = json.load(f)
        except json.JSONDecodeError as e:
            raise ScenarioError("%s: not JSON: %s" % (path, e)) from None
    if not isinstance(scenario, dict) or not isinstance(scenario.get("turns"), list):
        raise ScenarioError('%s: a scenario is an object with a "turns" list' % path)
    for i, turn in enumerate(scenario["turns"]):
        where = "%s: turn %d" % (path, i)
        if not isinstance(turn, dict):
            raise ScenarioError("%s is not an object" % where)
        unknown = set(turn) - TURN_KEYS
        if unknown:
            raise ScenarioError("%s: unknown keys %s (known: %s)" % (where, sorted(unknown), sorted(TURN_KEYS)))
        if "error" in turn:
            err = turn["error"]
            if not isinstance(err, dict) or not isinstance(err.get("status"), int) or not 400 <= err["status"] <= 599:
                raise ScenarioError('%s: "error" needs an HTTP "status" from 400 to 599' % where)
        for call in turn.get("tool_calls", []):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ScenarioError("%s: every tool call needs a name" % where)
            if ("arguments" in call) == ("input" in call):
                raise ScenarioError('%s: tool call %s needs "arguments" (an object) or "input" (a string)'
                                    % (where, call["name"]))
        usage = dict(DEFAULT_USAGE, **turn.get("usage", {}))
        if set(usage) != set(DEFAULT_USAGE) or not all(isinstance(v, int) and v >= 0 for v in usage.values()):
            raise ScenarioError('%s: "usage" holds non-negative integers %s' % (where, sorted(DEFAULT_USAGE)))
        if usage["cached_input_tokens"] > usage["input_tokens"]:
            raise ScenarioError("%s: more cached input tokens than input tokens" % where)
        if "delay_seconds" in turn and not isinstance(turn["delay_seconds"], (int, float)):
            raise ScenarioError('%s: "delay_seconds" is a number' % where)
    unknown = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", json.dumps(scenario))) - set(variables) - {"CWD"}
    if unknown:
        raise ScenarioError("%s uses %s, given no value (--var NAME=VALUE)"
                            % (path, ", ".join("${%s}" % n for n in sorted(unknown))))
    return substitute(scenario, variables, keep_unknown=True)


def substitute(value, variables, keep_unknown=False):
    if isinstance(value, str):
        def repl(m):
            name = m.group(1)
            if name in variables:
                return variables[name]
            if keep_unknown:
                return m.group(0)
            raise ScenarioError("the scenario uses ${%s}, which has no value" % name)
        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", repl, value)
    if isinstance(value, list):
        return [substitute(v, variables, keep_unknown) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables, keep_unknown) for k, v in value.items()}
    return value


def all_text(value):
    """Every string inside a request body, for finding what the CLI told the model."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from all_text(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from all_text(v)


def working_directory(body):
    texts = list(all_text(body))
    for pattern in CWD_PATTERNS:
        for text in texts:
            m = pattern.search(text)
            if m:
                return m.group(1).strip()
    return None


def is_within(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def tool_names(body):
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
        if declarations:
            names.extend(d.get("name", "?") for d in declarations if isinstance(d, dict))
        else:
            names.append(tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type") or "?")
    return names


def model_turns(protocol, body):
    """How many model turns the conversation in `body` already holds."""
    if protocol in ("anthropic", "chat"):
        return sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant")
    if protocol == "gemini":
        return sum(1 for c in body.get("contents") or [] if isinstance(c, dict) and c.get("role") == "model")
    # Responses: one model turn is a run of consecutive items the model produced.
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    turns, previous = 0, False
    for item in items:
        produced = isinstance(item, dict) and (
            item.get("type") in ("function_call", "custom_tool_call", "local_shell_call", "reasoning")
            or (item.get("type") == "message" and item.get("role") == "assistant"))
        if produced and not previous:
            turns += 1
        previous = produced
    return turns


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port, scenario, variables, log_path, dump_bodies=False, cwd_within=None):
        super().__init__(("127.0.0.1", port), Handler)
        self.cwd_within = cwd_within
        self.scenario = scenario
        self.variables = variables
        self.log_path = log_path
        self.dump_bodies = dump_bodies
        self.log_lock = threading.Lock()
        self.sequence = 0
        self.stopping = threading.Event()

    def log(self, entry):
        with self.log_lock:
            self.sequence += 1
            entry = dict(entry, seq=self.sequence, time=round(time.time(), 3))
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def turn_for(self, body, index):
        turns = self.scenario["turns"]
        turn = turns[index] if index < len(turns) else {"text": FINAL_TEXT}
        if "${" not in json.dumps(turn):
            return turn
        variables = dict(self.variables)
        cwd = working_directory(body)
        if cwd is not None:
            if self.cwd_within and not is_within(cwd, self.cwd_within):
                raise ScenarioError("the CLI says it works in %s, outside %s: no scripted tool call goes there"
                                    % (cwd, self.cwd_within))
            variables["CWD"] = cwd
        return substitute(turn, variables)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hydra-model-server"

    def log_message(self, fmt, *args):
        pass  # the JSONL log says everything; stderr stays quiet

    # ---------------------------------------------------------------- plumbing

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            import gzip
            raw = gzip.decompress(raw)
        elif encoding not in ("", "identity"):
            raise ValueError("unsupported Content-Encoding %r" % encoding)
        if not raw:
            return {}
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("the body is not a JSON object")
        return body

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, event, data):
        chunk = ""
        if event:
            chunk += "event: %s\n" % event
        chunk += "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def log_request_entry(self, protocol, body, extra):
        entry = {"method": self.command, "path": self.path, "protocol": protocol}
        if body is not None:
            entry["model"] = body.get("model")
            entry["stream"] = body.get("stream")
            entry["tools"] = tool_names(body)
            if self.server.dump_bodies:
                entry["body"] = body
        entry.update(extra)
        self.server.log(entry)

    # ---------------------------------------------------------------- routing

    def do_GET(self):
        path = self.path.split("?")[0]
        self.log_request_entry(None, None, {})
        if path in ("/v1/models", "/models"):
            return self.send_json(200, {"object": "list", "data": [
                {"id": "scripted-model", "object": "model", "created": 0, "owned_by": "hydra",
                 "type": "model", "display_name": "Scripted model", "created_at": "2026-01-01T00:00:00Z"}],
                "has_more": False, "first_id": "scripted-model", "last_id": "scripted-model"})
        if path in ("/v1beta/models", "/v1/models/"):
            return self.send_json(200, {"models": [{"name": "models/scripted-model"}]})
        if path == "/health":
            return self.send_json(200, {"ok": True})
        return self.send_json(404, {"error": {"message": "no GET %s here" % path, "type": "not_found_error"}})

    def do_POST(self):
        path = self.path.split("?")[0]
        try:
            body = self.read_body()
        except (ValueError, OSError) as e:
            self.log_request_entry(None, None, {"rejected": str(e)})
            return self.send_json(400, {"error": {"message": "unreadable request: %s" % e,
                                                  "type": "invalid_request_error"}})
        try:
            if path.endswith("/messages/count_tokens"):
                self.log_request_entry("anthropic", body, {"turn": "count_tokens"})
                return self.send_json(200, {"input_tokens": 100})
            if path.endswith(":countTokens"):
                self.log_request_entry("gemini", body, {"turn": "count_tokens"})
                return self.send_json(200, {"totalTokens": 100})
            if path.endswith("/messages"):
                return self.answer("anthropic", body, stream=bool(body.get("stream")))
            if path.endswith("/responses"):
                return self.answer("responses", body, stream=True)
            if path.endswith("/chat/completions"):
                return self.answer("chat", body, stream=bool(body.get("stream")))
            if path.endswith(":streamGenerateContent"):
                return self.answer("gemini", body, stream=True)
            if path.endswith(":generateContent"):
                return self.answer("gemini", body, stream=False)
        except (BrokenPipeError, ConnectionResetError):
            return None  # the CLI went away (cancelled, killed): nothing to answer
        self.log_request_entry(None, body, {"turn": "unknown path"})
        return self.send_json(404, {"error": {"message": "no POST %s here" % path, "type": "not_found_error"}})

    # ---------------------------------------------------------------- the script

    def answer(self, protocol, body, stream):
        scripted = bool(body.get("tools"))
        index = model_turns(protocol, body)
        if not scripted:
            self.log_request_entry(protocol, body, {"turn": "generic"})
            return self.reply(protocol, body, stream, {"text": GENERIC_TEXT})
        try:
            turn = self.server.turn_for(body, index)
        except ScenarioError as e:
            self.log_request_entry(protocol, body, {"turn": index, "action": "scenario error", "problem": str(e)})
            return self.send_error_turn(protocol, {"status": 400, "message": "scripted model: %s" % e})
        action = "error" if "error" in turn else "hang" if turn.get("hang") else "answer"
        self.log_request_entry(protocol, body, {"turn": index, "action": action, "cwd": working_directory(body)})
        if turn.get("hang"):
            # Hold the connection open, answer nothing, until the server stops.
            self.server.stopping.wait()
            self.close_connection = True
            return None
        if turn.get("delay_seconds"):
            if self.server.stopping.wait(turn["delay_seconds"]):
                return None
        if "error" in turn:
            return self.send_error_turn(protocol, turn["error"])
        return self.reply(protocol, body, stream, turn)

    def send_error_turn(self, protocol, error):
        status, message = error["status"], error.get("message", "scripted error")
        if protocol == "anthropic":
            kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
            payload = {"type": "error", "error": {"type": kind, "message": message}}
        elif protocol == "gemini":
            state = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                     404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
            payload = {"error": {"code": status, "message": message, "status": state}}
        else:
            kind = "invalid_request_error" if status < 500 else "server_error"
            payload = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        self.close_connection = True
        return self.send_json(status, payload)

    def reply(self, protocol, body, stream, turn):
        usage = dict(DEFAULT_USAGE, **turn.get("usage", {}))
        text = turn.get("text", "")
        calls = turn.get("tool_calls", [])
        for call in calls:
            if "input" in call and protocol != "responses":
                return self.send_error_turn(protocol, {"status": 400, "message":
                    "scripted model: the freeform tool call %s exists in OpenAI Responses only" % call["name"]})
        model = body.get("model") or "scripted-model"
        return getattr(self, "reply_" + protocol)(body, stream, model, text, calls, usage)

    # ---------------------------------------------------------------- Anthropic Messages

    def reply_anthropic(self, body, stream, model, text, calls, usage):
        content = []
        if text:
            content.append({"type": "text", "text": text})
        for call in calls:
            content.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                            "name": call["name"], "input": call["arguments"]})
        stop = "tool_use" if calls else "end_turn"
        wire_usage = {"input_tokens": usage["input_tokens"] - usage["cached_input_tokens"],
                      "output_tokens": usage["output_tokens"],
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": usage["cached_input_tokens"]}
        message_id = "msg_" + uuid.uuid4().hex[:24]
        if not stream:
            return self.send_json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                        "content": content, "stop_reason": stop, "stop_sequence": None,
                                        "usage": wire_usage})
        self.start_sse()
        self.sse("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": dict(wire_usage, output_tokens=1)}})
        for i, block in enumerate(content):
            if block["type"] == "text":
                start, delta = dict(block, text=""), {"type": "text_delta", "text": block["text"]}
            else:
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            self.sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": start})
            self.sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
            self.sse("content_block_stop", {"type": "content_block_stop", "index": i})
        self.sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": usage["output_tokens"]}})
        self.sse("message_stop", {"type": "message_stop"})
        return None

    # ---------------------------------------------------------------- OpenAI Responses

    def reply_responses(self, body, stream, model, text, calls, usage):
        response = {"id": "resp_" + uuid.uuid4().hex[:24], "object": "response", "created_at": int(time.time()),
                    "model": model, "status": "in_progress", "output": []}
        sequence = [0]

        def event(kind, **fields):
            fields = dict({"type": kind, "sequence_number": sequence[0]}, **fields)
            sequence[0] += 1
            self.sse(kind, fields)

        self.start_sse()
        event("response.created", response=response)
        event("response.in_progress", response=response)
        output = []
        if text:
            item_id = "msg_" + uuid.uuid4().hex[:24]
            part = {"type": "output_text", "text": text, "annotations": []}
            item = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
            at = len(output)
            event("response.output_item.added", output_index=at, item=item)
            event("response.content_part.added", output_index=at, item_id=item_id, content_index=0,
                  part=dict(part, text=""))
            event("response.output_text.delta", output_index=at, item_id=item_id, content_index=0, delta=text)
            event("response.output_text.done", output_index=at, item_id=item_id, content_index=0, text=text)
            event("response.content_part.done", output_index=at, item_id=item_id, content_index=0, part=part)
            item = dict(item, status="completed", content=[part])
            event("response.output_item.done", output_index=at, item=item)
            output.append(item)
        for call in calls:
            at = len(output)
            call_id = "call_" + uuid.uuid4().hex[:24]
            if "input" in call:
                item_id = "ctc_" + uuid.uuid4().hex[:24]
                item = {"id": item_id, "type": "custom_tool_call", "status": "in_progress", "name": call["name"],
                        "call_id": call_id, "input": ""}
                event("response.output_item.added", output_index=at, item=item)
                event("response.custom_tool_call_input.delta", output_index=at, item_id=item_id, delta=call["input"])
                event("response.custom_tool_call_input.done", output_index=at, item_id=item_id, input=call["input"])
                item = dict(item, status="completed", input=call["input"])
            else:
                item_id = "fc_" + uuid.uuid4().hex[:24]
                arguments = json.dumps(call["arguments"])
                item = {"id": item_id, "type": "function_call", "status": "in_progress", "name": call["name"],
                        "call_id": call_id, "arguments": ""}
                event("response.output_item.added", output_index=at, item=item)
                event("response.function_call_arguments.delta", output_index=at, item_id=item_id, delta=arguments)
                event("response.function_call_arguments.done", output_index=at, item_id=item_id, arguments=arguments)
                item = dict(item, status="completed", arguments=arguments)
            event("response.output_item.done", output_index=at, item=item)
            output.append(item)
        event("response.completed", response=dict(response, status="completed", output=output, usage={
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": usage["cached_input_tokens"]},
            "output_tokens": usage["output_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"]}))
        return None

    # ---------------------------------------------------------------- OpenAI Chat Completions

    def reply_chat(self, body, stream, model, text, calls, usage):
        completion_id = "chatcmpl-" + uuid.uuid4().hex[:24]
        tool_calls = [{"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                       "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}} for c in calls]
        finish = "tool_calls" if calls else "stop"
        wire_usage = {"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"],
                      "total_tokens": usage["input_tokens"] + usage["output_tokens"],
                      "prompt_tokens_details": {"cached_tokens": usage["cached_input_tokens"]}}
        if not stream:
            message = {"role": "assistant", "content": text or None}
            if tool_calls:
                message["tool_calls"] = tool_calls
            return self.send_json(200, {"id": completion_id, "object": "chat.completion", "created": int(time.time()),
                                        "model": model, "usage": wire_usage,
                                        "choices": [{"index": 0, "message": message, "finish_reason": finish}]})

        def chunk(delta, finish_reason=None):
            self.sse(None, {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})

        self.start_sse()
        chunk({"role": "assistant", "content": ""})
        if text:
            chunk({"content": text})
        for i, call in enumerate(tool_calls):
            chunk({"tool_calls": [dict(call, index=i)]})
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            self.sse(None, {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                            "model": model, "choices": [], "usage": wire_usage})
        self.sse(None, "[DONE]")
        return None

    # ---------------------------------------------------------------- Gemini

    def reply_gemini(self, body, stream, model, text, calls, usage):
        parts = []
        if text:
            parts.append({"text": text})
        for call in calls:
            parts.append({"functionCall": {"name": call["name"], "args": call["arguments"]}})
        response = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": usage["input_tokens"],
                              "candidatesTokenCount": usage["output_tokens"],
                              "cachedContentTokenCount": usage["cached_input_tokens"],
                              "totalTokenCount": usage["input_tokens"] + usage["output_tokens"]},
            "modelVersion": model,
        }
        if not stream:
            return self.send_json(200, response)
        self.start_sse()
        self.sse(None, response)
        return None


def parse_variables(pairs):
    variables = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ScenarioError("--var takes NAME=VALUE, not %r" % pair)
        if name == "CWD":
            raise ScenarioError("${CWD} comes from each request; it cannot be set with --var")
        variables[name] = value
    return variables


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", required=True, help="the scenario (JSON)")
    parser.add_argument("--log", required=True, help="where every request is appended (JSON lines)")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="replaces ${NAME} in the scenario")
    parser.add_argument("--dump-bodies", action="store_true", help="log whole request bodies")
    parser.add_argument("--cwd-within", metavar="DIR",
                        help="refuse to script tool calls for a CLI that says it works outside DIR "
                             "(a scenario writing to ${CWD} then cannot touch anything else)")
    args = parser.parse_args(argv)
    try:
        variables = parse_variables(args.var)
        scenario = load_scenario(args.scenario, variables)
    except (OSError, ScenarioError) as e:
        print("model_server.py: %s" % e, file=sys.stderr)
        return 2
    if args.cwd_within and not os.path.isdir(args.cwd_within):
        print("model_server.py: --cwd-within %s is not a directory" % args.cwd_within, file=sys.stderr)
        return 2
    server = ModelServer(args.port, scenario, variables, args.log, args.dump_bodies, args.cwd_within)

    def stop(signum, frame):
        server.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("LISTENING %d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.1)  # how soon a SIGTERM is acted on
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
