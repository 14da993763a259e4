# label: hazard raises
# why: with a frozen embedding and enable_input_require_grads-style forward hook, text_embeds is a leaf that requires grad, and the dummy-media workaround adds into it with +=
# source: https://github.com/NVlabs/VILA/pull/199
from collections import deque

import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyLLM(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.lora_A = nn.Linear(dim, 2, bias=False)
        self.lora_B = nn.Linear(2, dim, bias=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, inputs_embeds):
        h = inputs_embeds + self.lora_B(self.lora_A(inputs_embeds))
        return self.head(h)


def enable_input_require_grads(llm):
    def make_inputs_require_grads(module, input, output):
        output.requires_grad_(True)
    return llm.embed_tokens.register_forward_hook(make_inputs_require_grads)


class VILAForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.llm = TinyLLM()
        self.vision_tower = nn.Linear(6, 8)
        self.media_token_id = 11
        for p in self.llm.embed_tokens.parameters():
            p.requires_grad_(False)

    def _embed(self, input_ids, media, labels, attention_mask):
        text_embeds = self.llm.embed_tokens(input_ids)
        media_embeds = {name: deque(self.vision_tower(m) for m in media[name]) for name in media}

        # This is a workaround to make sure the dummy embeddings are consumed
        while media_embeds.get("dummy"):
            dummy_embed = media_embeds["dummy"].popleft()
            text_embeds += torch.sum(dummy_embed) * 0  # <-- IPL003: text_embeds is a leaf that requires grad (forward hook)

        batch_size = labels.shape[0]
        text_embeds = [text_embeds[k][attention_mask[k]] for k in range(batch_size)]
        labels = [labels[k][attention_mask[k]] for k in range(batch_size)]
        return torch.nn.utils.rnn.pad_sequence(text_embeds, batch_first=True), \
            torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=-100)

    def forward(self, input_ids, media, labels, attention_mask):
        inputs_embeds, labels = self._embed(input_ids, media, labels, attention_mask)
        logits = self.llm(inputs_embeds)
        return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)


model = VILAForCausalLM()
hook = enable_input_require_grads(model.llm)
input_ids = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 0]])
attention_mask = torch.tensor([[True, True, True, True], [True, True, True, False]])
labels = input_ids.clone()
media = {"dummy": [torch.randn(1, 6)]}
loss = model(input_ids, media, labels, attention_mask)
loss.backward()
