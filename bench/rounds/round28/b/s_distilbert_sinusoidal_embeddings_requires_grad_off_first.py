# label: safe no-twin
# why: after the fix requires_grad is switched off (and the weight detached) before the sin/cos tables are written into its slices, so the in-place slice assignments touch a frozen, non-differentiable buffer.
# source: https://github.com/huggingface/transformers/pull/9917
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DistilBertConfig:
    vocab_size = 50
    dim = 16
    max_position_embeddings = 12
    pad_token_id = 0
    sinusoidal_pos_embds = True
    n_labels = 2


def create_sinusoidal_embeddings(n_pos, dim, out):
    position_enc = torch.tensor(
        [[pos / math.pow(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)]
    )
    out.requires_grad = False
    out[:, 0::2] = torch.sin(position_enc[:, 0::2])
    out[:, 1::2] = torch.cos(position_enc[:, 1::2])
    out.detach_()


class Embeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.dim, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.dim)
        if config.sinusoidal_pos_embds:
            create_sinusoidal_embeddings(
                n_pos=config.max_position_embeddings, dim=config.dim, out=self.position_embeddings.weight
            )
        self.LayerNorm = nn.LayerNorm(config.dim, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class DistilBertForSequenceClassification(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embeddings = Embeddings(config)
        self.pre_classifier = nn.Linear(config.dim, config.dim)
        self.classifier = nn.Linear(config.dim, config.n_labels)

    def forward(self, input_ids, labels):
        hidden_state = self.embeddings(input_ids)
        pooled_output = F.relu(self.pre_classifier(hidden_state[:, 0]))
        logits = self.classifier(pooled_output)
        return F.cross_entropy(logits, labels), logits


def main():
    model = DistilBertForSequenceClassification(DistilBertConfig())
    input_ids = torch.randint(1, 50, (3, 8))
    labels = torch.tensor([0, 1, 1])
    loss, logits = model(input_ids, labels)
    loss.backward()
    return loss.detach(), model.embeddings.position_embeddings.weight.detach().clone()


loss, position_table = main()
