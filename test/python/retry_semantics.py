"""One failure case against the gateway with the official openai Python SDK at its default max_retries (2).

GW_CASE: json_length (parse() cut off by max_tokens), json_length_stream (the same, streamed),
not_configured (no model connected: 503), bad_gateway (the upstream keeps failing: 502).
Prints one JSON object: what was raised, and the status and x-should-retry header of an HTTP error.
"""
import json
import os
import sys

import openai
from openai import OpenAI
from pydantic import BaseModel


class Answer(BaseModel):
    mrn: str
    age: int


client = OpenAI(base_url=os.environ["GW_BASE_URL"], api_key=os.environ["GW_API_KEY"], timeout=20)
model, case = os.environ["GW_MODEL"], os.environ["GW_CASE"]
messages = [{"role": "user", "content": "MRN and age of patient S1000001, as JSON."}]
out = {"sdk": openai.__version__, "max_retries": client.max_retries, "raised": None}
try:
    if case == "json_length":
        client.chat.completions.parse(model=model, messages=messages, response_format=Answer, max_tokens=8)
    elif case == "json_length_stream":
        with client.chat.completions.stream(model=model, messages=messages, response_format=Answer, max_tokens=8) as stream:
            for _ in stream:
                pass
            stream.get_final_completion()
    else:
        client.chat.completions.create(model=model, messages=messages)
except openai.LengthFinishReasonError as e:
    out["raised"] = type(e).__name__
    out["content"] = e.completion.choices[0].message.content
except openai.APIStatusError as e:
    out.update(raised=type(e).__name__, status=e.status_code, code=e.code, should_retry=e.response.headers.get("x-should-retry"))
json.dump(out, sys.stdout)
