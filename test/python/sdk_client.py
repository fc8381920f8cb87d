"""Drives the gateway with the official openai Python SDK; prints one JSON object with what it saw."""
import json
import os
import sys

import openai
from openai import OpenAI

base_url, api_key, model = os.environ["GW_BASE_URL"], os.environ["GW_API_KEY"], os.environ["GW_MODEL"]
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=20)
question = [{"role": "user", "content": "What is the latest HbA1c of patient S1000002?"}]
out = {"sdk": openai.__version__}

r = client.chat.completions.create(model=model, messages=question, extra_body={"thinking": {"type": "enabled"}})
msg = r.choices[0].message
out["create"] = {
    "id": r.id,
    "content": msg.content,
    "reasoning_content": (msg.model_extra or {}).get("reasoning_content"),
    "finish_reason": r.choices[0].finish_reason,
    "cached_tokens": r.usage.prompt_tokens_details.cached_tokens,
    "tools": [c["name"] for c in (r.model_extra or {})["fhir_agent"]["tool_calls"]],
}

content, reasoning, finish, usage = [], [], None, None
with client.chat.completions.create(model=model, messages=question, stream=True, stream_options={"include_usage": True}) as stream:
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage.total_tokens
        for choice in chunk.choices:
            content.append(choice.delta.content or "")
            reasoning.append((choice.delta.model_extra or {}).get("reasoning_content") or "")
            finish = choice.finish_reason or finish
out["stream"] = {"content": "".join(content), "reasoning_content": "".join(reasoning), "finish_reason": finish, "total_tokens": usage}

errors = {}
try:
    client.chat.completions.create(model="nobody/unknown-model", messages=question)
except openai.NotFoundError as e:
    errors["unknown_model"] = [e.status_code, e.code]
try:
    OpenAI(base_url=base_url, api_key="sk-wrong", max_retries=0).chat.completions.create(model=model, messages=question)
except openai.AuthenticationError as e:
    errors["bad_key"] = [e.status_code, e.code]
try:
    client.chat.completions.create(model=model, messages=[{"role": "tool", "content": "orphan"}])
except openai.BadRequestError as e:
    errors["bad_request"] = [e.status_code, e.param is not None]
out["errors"] = errors
json.dump(out, sys.stdout)
