# label: hazard raises
# why: with frozen word embeddings, enable_input_require_grads() makes the embedding output a leaf that requires grad via a forward hook, and DebertaEmbeddings then adds the position and token-type embeddings into it with +=.
# source: https://github.com/huggingface/transformers/pull/35898
import torch
from torch import nn

torch.manual_seed(0)


class DebertaEmbeddings(nn.Module):
    def __init__(self, vocab_size=20, hidden_size=8, max_position_embeddings=16, type_vocab_size=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        self.position_biased_input = True
        self.position_embeddings = nn.Embedding(max_position_embeddings, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)
        self.register_buffer("position_ids", torch.arange(max_position_embeddings).expand((1, -1)), persistent=False)

    def forward(self, input_ids=None, token_type_ids=None, mask=None):
        seq_length = input_ids.shape[1]
        position_ids = self.position_ids[:, :seq_length]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        inputs_embeds = self.word_embeddings(input_ids)
        position_embeddings = self.position_embeddings(position_ids.long())
        embeddings = inputs_embeds
        if self.position_biased_input:
            embeddings += position_embeddings  # <-- IPL003: embeddings is the hooked leaf that requires grad
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings += token_type_embeddings
        embeddings = self.LayerNorm(embeddings)
        if mask is not None:
            embeddings = embeddings * mask.unsqueeze(2).to(embeddings.dtype)
        return embeddings


class DebertaForSequenceClassification(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = DebertaEmbeddings()
        self.encoder = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
        self.classifier = nn.Linear(8, 2)

    def get_input_embeddings(self):
        return self.embeddings.word_embeddings

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, attention_mask, labels):
        hidden = self.encoder(self.embeddings(input_ids, mask=attention_mask))
        logits = self.classifier(hidden[:, 0])
        return nn.functional.cross_entropy(logits, labels), logits


model = DebertaForSequenceClassification()
# adapter-style fine-tuning: freeze the backbone embeddings, train the rest
for p in model.embeddings.parameters():
    p.requires_grad_(False)
model.enable_input_require_grads()
input_ids = torch.tensor([[2, 5, 7, 9, 0], [3, 4, 11, 0, 0]])
attention_mask = (input_ids != 0).long()
loss, logits = model(input_ids, attention_mask, torch.tensor([0, 1]))
loss.backward()
