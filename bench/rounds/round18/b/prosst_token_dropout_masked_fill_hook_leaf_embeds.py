# label: hazard raises
# why: under LoRA/IA3 the frozen word embedding gets a forward hook that makes its output a grad-requiring leaf, and ProSST's ESM-style token dropout then zeroes masked positions with inputs_embeds.masked_fill_ in place
# source: https://github.com/ai4protein/VenusFactory2/issues/44
import torch
import torch.nn as nn

torch.manual_seed(0)


class ProSSTEmbeddings(nn.Module):
    def __init__(self, vocab_size, ss_vocab_size, hidden_size, mask_token_id, token_dropout=True):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        self.ss_embeddings = nn.Embedding(ss_vocab_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)
        self.mask_token_id = mask_token_id
        self.token_dropout = token_dropout

    def forward(self, input_ids, ss_input_ids, attention_mask):
        inputs_embeds = self.word_embeddings(input_ids)
        if self.token_dropout:
            inputs_embeds.masked_fill_(  # <-- IPL003: inputs_embeds is a leaf made to require grad by the input hook
                (input_ids == self.mask_token_id).unsqueeze(-1), 0.0
            )
            mask_ratio_train = 0.15 * 0.8
            src_lengths = attention_mask.sum(-1)
            mask_ratio_observed = (input_ids == self.mask_token_id).sum(-1).float() / src_lengths
            inputs_embeds = (inputs_embeds * (1 - mask_ratio_train) / (1 - mask_ratio_observed)[:, None, None]).to(inputs_embeds.dtype)
        embeddings = inputs_embeds + self.ss_embeddings(ss_input_ids)
        embeddings = self.LayerNorm(embeddings)
        return embeddings * attention_mask.unsqueeze(-1).to(embeddings.dtype)


class LoRALinear(nn.Module):
    def __init__(self, base, r=2, alpha=4):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


class ProSSTForSequenceClassification(nn.Module):
    def __init__(self, vocab_size=25, ss_vocab_size=8, hidden_size=16, num_labels=2, mask_token_id=24):
        super().__init__()
        self.embeddings = ProSSTEmbeddings(vocab_size, ss_vocab_size, hidden_size, mask_token_id)
        self.query = nn.Linear(hidden_size, hidden_size)
        self.value = nn.Linear(hidden_size, hidden_size)
        self.output = nn.Linear(hidden_size, hidden_size)
        self.classifier = nn.Linear(hidden_size, num_labels)

    def get_input_embeddings(self):
        return self.embeddings.word_embeddings

    def forward(self, input_ids, ss_input_ids, attention_mask):
        h = self.embeddings(input_ids, ss_input_ids, attention_mask)
        q, v = self.query(h), self.value(h)
        scores = q @ h.transpose(1, 2) / h.size(-1) ** 0.5
        scores = scores.masked_fill(attention_mask[:, None, :] == 0, float('-inf'))
        h = h + self.output(torch.softmax(scores, dim=-1) @ v)
        pooled = (h * attention_mask.unsqueeze(-1)).sum(1) / attention_mask.sum(1, keepdim=True)
        return self.classifier(pooled)


model = ProSSTForSequenceClassification()
# peft-style LoRA setup: freeze everything, wrap the attention projections, enable input grads
for p in model.parameters():
    p.requires_grad_(False)
model.query = LoRALinear(model.query)
model.value = LoRALinear(model.value)
model.get_input_embeddings().register_forward_hook(lambda module, input, output: output.requires_grad_(True))

input_ids = torch.randint(1, 24, (2, 6))
input_ids[0, 2] = 24
ss_input_ids = torch.randint(0, 8, (2, 6))
attention_mask = torch.ones(2, 6, dtype=torch.long)
labels = torch.tensor([0, 1])
logits = model(input_ids, ss_input_ids, attention_mask)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
