"""Does a text read as an instruction to the agent? (prompt injection, memory poisoning)

Deterministic and offline: the text is normalised first (NFKC, format and zero-width characters removed,
confusable Cyrillic and Greek letters mapped to Latin, case folded, whitespace collapsed), so that Unicode
obfuscation does not hide a pattern; then a small set of patterns, English and Chinese, each a shape that
an instruction aimed at the agent takes: overriding what it was told, a standing order ("from now on
always …"), a shell command or a URL to fetch and run, a fake role or prompt marker.

It is a tripwire, not the defence: what reaches the core is decided first by origin (only text a person
typed), and this only adds a hold for mixed evidence. It is never applied to the person's own words, so a
preference such as "always answer in French" typed by the user is theirs to keep.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["looks_like_injection", "looks_like_instruction", "normalise"]

# Letters that look like Latin ones (the usual homoglyph substitutions), mapped to them.
_CONFUSABLES: Final = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
        "т": "t", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h",
        "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
        "χ": "x", "ӏ": "l", "ɡ": "g", "ɑ": "a",
    }
)  # fmt: skip

_SPACES: Final = re.compile(r"\s+")


def normalise(text: str) -> str:
    """`text` as the patterns see it: NFKC, without format characters (zero-width spaces and joiners,
    bidi controls, soft hyphens), confusables mapped to Latin, case folded, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = text.casefold().translate(_CONFUSABLES)
    return _SPACES.sub(" ", text).strip()


_VERBS: Final = (
    r"(?:run|execute|exec|send|call|invoke|include|insert|add|append|say|reply|respond|answer|output|print|"
    r"visit|open|browse|fetch|download|install|delete|remove|erase|wipe|reveal|leak|share|email|e-mail|mail|"
    r"post|upload|forward|transfer|pay|buy|approve|grant|disable|turn off|bypass|use|recommend|tell|copy|"
    r"paste|write|save|store|remember|click|navigate|go to|ignore|obey|follow|trust)(?:s|es|ed|ing)?"
)

_PATTERNS: Final = tuple(
    re.compile(pattern)
    for pattern in (
        # Overriding what the agent was told.
        r"\b(?:ignor(?:e|es|ed|ing)|disregard(?:s|ed|ing)?|forget(?:s|ting)?|overrid(?:e|es|ing)|"
        r"bypass(?:es|ed|ing)?|skip(?:s|ped|ping)?)\b.{0,40}\b(?:previous|prior|above|earlier|"
        r"preceding|all|any|your|the|system|original|safety)\b.{0,30}\b(?:instructions?|prompts?|rules?|"
        r"guidelines?|directions?|messages?|context|policies|policy|constraints?)\b",
        r"\b(?:new|updated|real|actual|hidden|secret) (?:instructions?|rules?|system prompt|directives?)\s*:",
        r"\bsystem prompt\b",
        r"\b(?:you are|you're|act as|pretend to be|roleplay as) (?:now |no longer )?(?:an? |the )?"
        r"(?:dan\b|jailbroken|unrestricted|developer mode|evil|hacker|admin)",
        # A standing order aimed at the agent.
        r"\b(?:from now on|henceforth|going forward|in (?:all )?future (?:conversations|sessions|replies|"
        r"answers)|for (?:all|every) (?:future )?(?:conversations?|sessions?|responses?|replies))\b",
        r"\b(?:you|the assistant|the agent|the ai|assistant|agent|claude|chatgpt|gpt|model)\b.{0,20}"
        r"\b(?:must|should|shall|will|have to|need to|are required to|is required to)\b.{0,30}"
        r"\b(?:always|never|now|immediately)?\b.{0,10}\b" + _VERBS + r"\b",
        r"(?:^|[.!:;,] ?)(?:always|never|make sure to|be sure to|remember to|do not forget to|don't forget to|"
        r"you must|you should|please) " + _VERBS + r"\b",
        r"\b(?:important|attention|note to (?:the )?(?:ai|assistant|agent|model)|instruction|admin|system)"
        r"\s*[:!]\s*.{0,40}\b" + _VERBS + r"\b",
        # Shell commands and code to run.
        r"\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo )?(?:ba|z|da|k)?sh\b",
        r"\b(?:curl|wget|iwr|invoke-webrequest|invoke-expression|iex)\b\s+\S",
        r"\brm -rf?\b|\bsudo \w|\bchmod \+x\b|\bbase64 (?:-d|--decode)\b|\bpowershell\b|\bnc -e\b",
        r"\b(?:bash|sh|zsh|python3?|node|perl|ruby) -c\b|\beval\s*\(|\bexec\s*\(|\bos\.system\b|\bsubprocess\b",
        r"`[^`]*\b(?:curl|wget|rm|sudo|bash|sh|python|pip|npm|chmod|ssh|scp)\b[^`]*`",
        # A URL together with an order to act on it.
        r"\b" + _VERBS + r"\b.{0,60}\b(?:https?://|www\.)\S+",
        r"(?:https?://|www\.)\S+.{0,40}\b(?:and|then) (?:run|execute|install|open|download)\b",
        # Orders given through what someone "wants" of the agent, and acting without asking.
        r"\b(?:want|wants|need|needs|expect|expects|require|requires|ask|asks|tell|tells|told|instruct|instructs)"
        r" (?:you|the assistant|the agent|the ai|the model|claude|chatgpt) to\b",
        r"\b(?:without|never) (?:asking|confirmation|confirming|permission|checking|a prompt|review)\b",
        r"\b(?:approv|authori[sz]|accept|pay|sign)(?:e|es|ed|ing|s)? (?:every|all|any|each) (?:payments?|"
        r"transactions?|requests?|purchases?|transfers?|invoices?|pull requests?|changes?)\b",
        r"\b(?:execute|run)(?:s|ing)? (?:any |all |every |the )?(?:shell |terminal |system )?commands?\b",
        # Sending away what is private.
        r"\b(?:send|email|e-mail|mail|forward|share|upload|post|leak|publish|transfer|give)(?:s|es|ed|ing)?\b"
        r".{0,40}\b(?:passwords?|passcodes?|api keys?|keys|tokens?|secrets?|credentials?|cookies|ssh|"
        r"private|address|credit card|bank|account numbers?|chat logs?|conversations?|history)\b",
        r"\b(?:share|post|publish|leak)(?:s|ed|ing)?\b.{0,30}\b(?:publicly|online|with (?:partners|third "
        r"parties|everyone|strangers))\b",
        r"\b(?:send|email|e-mail|mail|forward|upload|post)(?:s|es|ed|ing)?\b.{0,60}[\w.+-]+@[\w-]+\.\w",
        # Fake role and prompt markers.
        r"<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>|\[/?inst\]|<</?sys>>|### ?(?:instruction|"
        r"system|response)\b|^(?:system|assistant)\s*:",
        # Chinese: ignore the instructions, from now on, you must, run / execute / download / visit.
        r"(?:忽略|无视|忘记|忘掉|不要理会|覆盖).{0,12}(?:之前|以上|上面|先前|所有|全部|原来|系统)?.{0,6}"
        r"(?:指令|指示|说明|提示|规则|设定|要求)",
        r"(?:从现在(?:开始|起)|今后|以后|此后|从今往后)",
        r"(?:你|助手|模型|ai|智能体)(?:必须|应该|应当|一定要|需要|务必|总是|永远|每次都)",
        r"(?:运行|执行|下载|安装|访问|打开|发送|删除|转账)(?:以下|下面|这个|此)?(?:命令|脚本|代码|链接|网址|程序|文件)",
        r"(?:总是|永远|始终|每次)(?:要|都要|都)?(?:运行|执行|回复|回答|发送|推荐|访问|打开|包含|加上)",
        r"(?:新的|真正的|隐藏的)(?:指令|指示|系统提示)",
        r"(?:密码|密钥|口令|令牌|地址|信用卡|银行|账号|聊天记录).{0,12}(?:发送|发给|分享|上传|转发|公开)",
        r"(?:发送|发给|分享|上传|转发)(?:到|给)?.{0,12}(?:@|https?://|www\.)",
        r"(?:下载|安装|运行|执行).{0,8}(?:https?://|www\.|\.exe|\.sh\b)",
    )
)


def looks_like_instruction(text: str) -> bool:
    """True when `text` (after `normalise`) has a shape an instruction to the agent takes."""
    seen = normalise(text)
    return any(pattern.search(seen) for pattern in _PATTERNS)


# The shapes of text that addresses the agent itself: overriding what it was told, new or hidden
# instructions, a fake role or prompt marker, a standing order ("from now on"), an order to the assistant
# by name, an order to send away what is private. A tool's output is full of commands, URLs and
# imperatives meant for the person who reads a manual ("Run `npm install`", "Always commit ..."); those
# shapes (`_PATTERNS`' others) are what an agent's work looks like, not an attack on it.
_INJECTION: Final = tuple(
    re.compile(pattern)
    for pattern in (
        _PATTERNS[0].pattern,
        _PATTERNS[1].pattern,
        _PATTERNS[2].pattern,
        _PATTERNS[3].pattern,
        _PATTERNS[4].pattern,
        _PATTERNS[5].pattern,
        r"\bnote to (?:the )?(?:ai|assistant|agent|model)\b",
        r"\b(?:want|wants|need|needs|expect|expects|require|requires|ask|asks|tell|tells|told|instruct|"
        r"instructs) (?:you|the assistant|the agent|the ai|the model|claude|chatgpt) to\b",
        r"\b(?:send|email|e-mail|mail|forward|share|upload|post|leak|publish|transfer|give)(?:s|es|ed|ing)?\b"
        r".{0,40}\b(?:passwords?|passcodes?|api keys?|secrets?|credentials?|credit card|bank|account numbers?|"
        r"chat logs?|conversations?)\b",
        r"<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>|\[/?inst\]|<</?sys>>|### ?(?:instruction|"
        r"system|response)\b|^(?:system|assistant)\s*:",
        r"(?:忽略|无视|忘记|忘掉|不要理会|覆盖).{0,12}(?:之前|以上|上面|先前|所有|全部|原来|系统)?.{0,6}"
        r"(?:指令|指示|说明|提示|规则|设定|要求)",
        r"(?:从现在(?:开始|起)|今后|此后|从今往后)",
        r"(?:你|助手|模型|ai|智能体)(?:必须|应该|应当|一定要|需要|务必|总是|永远|每次都)",
        r"(?:新的|真正的|隐藏的)(?:指令|指示|系统提示)",
    )
)


def looks_like_injection(text: str) -> bool:
    """True when `text` (after `normalise`) addresses the agent itself: the narrower tripwire for text an
    agent read while working (see `_INJECTION`)."""
    seen = normalise(text)
    return any(pattern.search(seen) for pattern in _INJECTION)
