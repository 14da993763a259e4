# label: hazard raises no-twin
# why: SLUTrainer.train_step calls optimizer.step() after loss_bin.backward(retain_graph=True), updating the BiLSTM/embedding weights in place, and then backpropagates the slot-name loss through lstm_hiddens whose graph saved those weights.
# source: https://github.com/zliucr/coach/issues/5
import torch
import torch.nn as nn

torch.manual_seed(0)


class BinarySLUTagger(nn.Module):
    def __init__(self, vocab_size=30, emb_dim=8, hidden_dim=6, num_binslot=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.lstm = nn.LSTM(emb_dim, hidden_dim, batch_first=True, bidirectional=True)
        self.linear = nn.Linear(hidden_dim * 2, num_binslot)

    def forward(self, X):
        embeddings = self.embedding(X)
        lstm_hiddens, _ = self.lstm(embeddings)
        prediction = self.linear(lstm_hiddens)
        return prediction, lstm_hiddens

    def crf_loss(self, inputs, lengths, y):
        # token-level NLL used as a stand-in for the CRF negative log-likelihood
        mask = torch.arange(inputs.size(1))[None, :] < lengths[:, None]
        logp = inputs.log_softmax(-1).gather(-1, y.unsqueeze(-1)).squeeze(-1)
        return -(logp * mask).sum() / mask.sum()


class SlotNamePredictor(nn.Module):
    def __init__(self, hidden_dim=6, num_slot=4):
        super().__init__()
        self.linear = nn.Linear(hidden_dim * 2, num_slot)

    def forward(self, lstm_hiddens, spans):
        pred_slotname_list = []
        for i, sample_spans in enumerate(spans):
            feats = torch.stack([lstm_hiddens[i, s:e].mean(0) for s, e in sample_spans])
            pred_slotname_list.append(self.linear(feats))
        return pred_slotname_list


class SLUTrainer(object):
    def __init__(self, binary_slu_tagger, slotname_predictor, lr=1e-2):
        self.binary_slu_tagger = binary_slu_tagger
        self.slotname_predictor = slotname_predictor
        model_parameters = [
            {"params": self.binary_slu_tagger.parameters()},
            {"params": self.slotname_predictor.parameters()},
        ]
        self.optimizer = torch.optim.Adam(model_parameters, lr=lr)
        self.loss_fn = nn.CrossEntropyLoss()

    def train_step(self, X, lengths, y_bin, spans, gold_slotname_list):
        self.binary_slu_tagger.train()
        self.slotname_predictor.train()

        bin_preds, lstm_hiddens = self.binary_slu_tagger(X)

        ## optimize binary_slu_tagger
        loss_bin = self.binary_slu_tagger.crf_loss(bin_preds, lengths, y_bin)
        self.optimizer.zero_grad()
        loss_bin.backward(retain_graph=True)
        self.optimizer.step()  # <-- IPL001

        ## optimize slotname_predictor
        pred_slotname_list = self.slotname_predictor(lstm_hiddens, spans)
        for pred_slotname_each_sample, gold_slotname_each_sample in zip(pred_slotname_list, gold_slotname_list):
            loss_slotname = self.loss_fn(pred_slotname_each_sample, gold_slotname_each_sample)
            self.optimizer.zero_grad()
            loss_slotname.backward(retain_graph=True)
            self.optimizer.step()  # <-- IPL001

        return loss_bin.item(), loss_slotname.item()


def main():
    trainer = SLUTrainer(BinarySLUTagger(), SlotNamePredictor())
    X = torch.randint(0, 30, (2, 7))
    lengths = torch.tensor([7, 5])
    y_bin = torch.randint(0, 3, (2, 7))
    spans = [[(0, 2), (3, 5)], [(1, 3)]]
    gold = [torch.tensor([1, 2]), torch.tensor([3])]
    losses = trainer.train_step(X, lengths, y_bin, spans, gold)
    return torch.tensor(losses)


result = main()
