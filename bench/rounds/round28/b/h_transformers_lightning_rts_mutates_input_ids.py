# label: hazard silent
# why: RandomTokenSubstitution.__call__ swaps random ids into the tensor it receives (inputs[substituted_indices] = ...), so calling it on batch["input_ids"] silently corrupts the original ids that the masked-LM head of the same training step then uses as its labels.
# source: https://github.com/iKernels/transformers-lightning/issues/74
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IGNORE_IDX = -100


class ToyTokenizer:
    pad_token_id = 0
    _pad_token = "[PAD]"

    def __len__(self):
        return 30

    def get_special_tokens_mask(self, ids, already_has_special_tokens=True):
        return [1 if i in (1, 2) else 0 for i in ids]


class RandomTokenSubstitution:
    def __init__(self, tokenizer, rts_probability=0.3):
        self.tokenizer = tokenizer
        self.rts_probability = rts_probability

    def __call__(self, inputs):
        labels = torch.full(inputs.shape, fill_value=0, dtype=torch.long)
        probability_matrix = torch.full(inputs.shape, fill_value=self.rts_probability, dtype=torch.float32)
        special_tokens_mask = [
            self.tokenizer.get_special_tokens_mask(val, already_has_special_tokens=True) for val in inputs.tolist()
        ]
        special_tokens_mask_tensor = torch.tensor(special_tokens_mask, dtype=torch.bool)
        probability_matrix.masked_fill_(special_tokens_mask_tensor, value=0.0)
        labels.masked_fill_(special_tokens_mask_tensor, value=IGNORE_IDX)
        if self.tokenizer._pad_token is not None:
            padding_mask = inputs.eq(self.tokenizer.pad_token_id)
            probability_matrix.masked_fill_(padding_mask, value=0.0)
            labels.masked_fill_(padding_mask, value=IGNORE_IDX)
        substituted_indices = torch.bernoulli(probability_matrix).bool()
        random_words = torch.randint(len(self.tokenizer), inputs.shape, dtype=torch.long)
        inputs[substituted_indices] = random_words[substituted_indices]  # <-- IPL004
        labels.masked_fill_(substituted_indices, value=1)
        return inputs, labels


class JointRTSMLMModel(nn.Module):
    def __init__(self, vocab_size=30, hidden=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden)
        self.encoder = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.rts_head = nn.Linear(hidden, 2)
        self.mlm_head = nn.Linear(hidden, vocab_size)
        self.rts = RandomTokenSubstitution(ToyTokenizer())

    def training_step(self, batch):
        rts_ids, rts_labels = self.rts(batch["input_ids"])
        hidden = self.encoder(self.embeddings(rts_ids))
        rts_loss = F.cross_entropy(self.rts_head(hidden).flatten(0, 1), rts_labels.flatten(), ignore_index=IGNORE_IDX)
        # auxiliary LM objective: reconstruct the original sentence at every position
        mlm_labels = batch["input_ids"]
        mlm_loss = F.cross_entropy(self.mlm_head(hidden).flatten(0, 1), mlm_labels.flatten())
        return rts_loss + mlm_loss


def main():
    model = JointRTSMLMModel()
    body = torch.randint(3, 30, (4, 8))
    batch = {"input_ids": torch.cat([torch.ones(4, 1, dtype=torch.long), body, torch.full((4, 1), 2)], dim=1)}
    loss = model.training_step(batch)
    loss.backward()
    return loss.detach(), batch["input_ids"], model.mlm_head.weight.grad


loss, input_ids, mlm_head_grad = main()
