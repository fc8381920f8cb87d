"""What LangChain's chat models keep of the gateway's reasoning_content: ChatOpenAI and ChatDeepSeek, invoke and
stream, against GW_BASE_URL. Prints one JSON object for test/langchain-python.test.ts."""
import json
import os

from langchain_deepseek import ChatDeepSeek
from langchain_openai import ChatOpenAI

base, key, model = os.environ["GW_BASE_URL"], os.environ.get("GW_API_KEY", "no-key"), os.environ["GW_MODEL"]
question = "What is the latest HbA1c of patient S1000002?"


def summary(chat):
    done = chat.invoke(question)
    streamed = None
    for chunk in chat.stream(question):
        streamed = chunk if streamed is None else streamed + chunk
    return {
        "invoke": {"content": done.content, "reasoning_content": done.additional_kwargs.get("reasoning_content")},
        "stream": {"content": streamed.content, "reasoning_content": streamed.additional_kwargs.get("reasoning_content")},
    }


print(json.dumps({
    "openai": summary(ChatOpenAI(base_url=base, api_key=key, model=model)),
    "deepseek": summary(ChatDeepSeek(api_base=base, api_key=key, model=model)),
}))
