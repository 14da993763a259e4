# label: hazard raises no-twin
# why: the course Transformer fills the sinusoidal table straight into position_embeddings.weight, so the slice assignments write into views of a leaf Parameter that requires grad (and mutate the argument E) outside torch.no_grad().
# source: https://github.com/Atcold/NYU-DLSP20/issues/765
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def create_sinusoidal_embeddings(nb_p, dim, E):
    theta = np.array([[p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(nb_p)])
    E[:, 0::2] = torch.FloatTensor(np.sin(theta[:, 0::2]))  # <-- IPL003, IPL004: view of the leaf position-embedding weight passed in as E
    E[:, 1::2] = torch.FloatTensor(np.cos(theta[:, 1::2]))  # <-- IPL003, IPL004: same leaf weight
    E.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings, p):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(nb_p=max_position_embeddings, dim=d_model, E=self.position_embeddings.weight)
        self.LayerNorm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class TransformerClassifier(nn.Module):
    def __init__(self, d_model, input_vocab_size, num_answers, maximum_position_encoding=16):
        super().__init__()
        self.embedding = Embeddings(d_model, input_vocab_size, maximum_position_encoding, p=0.1)
        self.encoder = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=16, batch_first=True)
        self.dense = nn.Linear(d_model, num_answers)

    def forward(self, x):
        x = self.encoder(self.embedding(x))
        return self.dense(x.max(dim=1)[0])


model = TransformerClassifier(d_model=8, input_vocab_size=30, num_answers=2)
logits = model(torch.randint(2, 30, (2, 6)))
loss = nn.functional.cross_entropy(logits, torch.tensor([0, 1]))
loss.backward()
