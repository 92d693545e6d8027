"""Evaluate's perplexity runs under the model's lock: another session's hooks cannot leak into it."""
import threading

from backend.models import load
from backend.models.hooks import HeadEdit, Hooks
from backend.watermark.quality import perplexity

PROMPT, RESPONSE = "Write about the sea.", "The sea is wide and grey. Waves come in slowly."


def test_perplexity_while_another_thread_holds_hooks_equals_perplexity_alone():
    handle = load("tiny-llama")
    alone = perplexity(handle, PROMPT, RESPONSE)
    every_head = [HeadEdit(layer, (0, 1, 2, 3), "zero") for layer in range(2)]
    with Hooks(handle.model, head_edits=every_head):  # what a concurrent unlocked forward would have seen
        ablated = perplexity(handle, PROMPT, RESPONSE)
    assert ablated != alone

    hooked, release = threading.Event(), threading.Event()

    def other_session():
        with Hooks(handle.model, head_edits=every_head):
            hooked.set()
            release.wait(10)

    other = threading.Thread(target=other_session)
    other.start()
    assert hooked.wait(10)
    result: list[float] = []
    evaluate = threading.Thread(target=lambda: result.append(perplexity(handle, PROMPT, RESPONSE)))
    evaluate.start()
    evaluate.join(0.5)
    assert evaluate.is_alive()  # it waits for the other session's hooked computation to finish
    release.set()
    other.join(10)
    evaluate.join(30)
    assert result == [alone]
