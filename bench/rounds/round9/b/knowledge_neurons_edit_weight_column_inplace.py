# label: hazard raises no-twin
# why: knowledge editing subtracts/adds word embeddings directly into a column of the FFN output weight (a view of a leaf Parameter that requires grad) outside torch.no_grad().
# source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
import torch
import torch.nn as nn

torch.manual_seed(0)


class Output(nn.Module):
    def __init__(self, intermediate, hidden):
        super().__init__()
        self.dense = nn.Linear(intermediate, hidden)


class Layer(nn.Module):
    def __init__(self, hidden=6, intermediate=10):
        super().__init__()
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = Output(intermediate, hidden)

    def forward(self, x):
        return x + self.output.dense(torch.relu(self.intermediate(x)))


class Encoder(nn.Module):
    def __init__(self, n_layers=2):
        super().__init__()
        self.layer = nn.ModuleList([Layer() for _ in range(n_layers)])


class Bert(nn.Module):
    def __init__(self, vocab=20):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, 6)
        self.encoder = Encoder()


class BertForMaskedLM(nn.Module):
    def __init__(self, vocab=20):
        super().__init__()
        self.bert = Bert(vocab)
        self.cls = nn.Linear(6, vocab)

    def forward(self, input_ids):
        h = self.bert.embeddings(input_ids)
        for layer in self.bert.encoder.layer:
            h = layer(h)
        return self.cls(h)


model = BertForMaskedLM()
kn_bag = [[1, 3], [0, 7]]  # (layer, neuron position) pairs of the knowledge neurons
ori_pred_emb = model.bert.embeddings.weight[4]
tgt_emb = model.bert.embeddings.weight[9]
lambda_list_1 = [0.5, 0.5]
lambda_list_2 = [0.5, 0.5]
for i, (layer, pos) in enumerate(kn_bag):
    model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]  # <-- IPL003: view of a leaf Parameter that requires grad
    model.bert.encoder.layer[layer].output.dense.weight[:, pos] += tgt_emb * lambda_list_2[i]  # <-- IPL003: same leaf weight view
logits = model(torch.tensor([[2, 5, 8]]))
edited_prob = logits.softmax(-1)[0, 1, 9]
