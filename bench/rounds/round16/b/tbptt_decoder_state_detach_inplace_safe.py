# label: safe no-twin
# why: with truncated BPTT the decoder state is detached in place (h.detach_()) only after the chunk's backward and optimizer step; the LSTM's final (h, c) are fresh non-view outputs whose graph has already been consumed, so the next chunk simply starts from constants
# source: https://github.com/OpenNMT/OpenNMT-py/issues/1148 (v0.1 onmt/Trainer.py truncated decoder loop calling dec_state.detach(), onmt/Models.py RNNDecoderState.detach -> h.detach_())
import torch
import torch.nn as nn

torch.manual_seed(0)


class RNNDecoderState:
    def __init__(self, rnnstate):
        if not isinstance(rnnstate, tuple):
            self.hidden = (rnnstate,)
        else:
            self.hidden = rnnstate

    @property
    def _all(self):
        return self.hidden

    def update_state(self, rnnstate):
        if not isinstance(rnnstate, tuple):
            self.hidden = (rnnstate,)
        else:
            self.hidden = rnnstate

    def detach(self):
        for h in self._all:
            if h is not None:
                h.detach_()


class NMTModel(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, emb)
        self.tgt_emb = nn.Embedding(vocab, emb)
        self.encoder = nn.LSTM(emb, hidden)
        self.decoder = nn.LSTM(emb, hidden)
        self.generator = nn.Linear(hidden, vocab)

    def forward(self, src, tgt, dec_state=None):
        tgt = tgt[:-1]  # exclude last target from inputs
        _, enc_final = self.encoder(self.src_emb(src))
        if dec_state is None:
            dec_state = RNNDecoderState(enc_final)
        dec_out, dec_final = self.decoder(self.tgt_emb(tgt), dec_state.hidden)
        dec_state.update_state(dec_final)
        return self.generator(dec_out), dec_state


vocab, trunc_size = 11, 4
model = NMTModel(vocab, 6, 8)
optim = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

src = torch.randint(0, vocab, (7, 3))
target = torch.randint(0, vocab, (13, 3))
target_size = target.size(0)

dec_state = None
losses = []
for j in range(0, target_size - 1, trunc_size):
    tgt = target[j: j + trunc_size + 1]
    model.zero_grad()
    logits, dec_state = model(src, tgt, dec_state)
    loss = criterion(logits.reshape(-1, vocab), tgt[1:].reshape(-1))
    loss.backward()
    optim.step()
    losses.append(loss.detach())

    # If truncated, don't backprop fully.
    if dec_state is not None:
        dec_state.detach()

losses = torch.stack(losses)
final_h = dec_state.hidden[0].clone()
