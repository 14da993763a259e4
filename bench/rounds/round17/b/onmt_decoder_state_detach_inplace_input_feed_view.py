# label: hazard raises no-twin
# why: truncated BPTT calls DecoderState.detach(), which detach_()es every state tensor in place, but input_feed is stored as output.unsqueeze(0), a view, and views cannot be detached in place.
# source: https://github.com/Eurus-Holmes/MNMT/issues/6
import torch
import torch.nn as nn

torch.manual_seed(0)


class DecoderState(object):
    def detach(self):
        for h in self.all:
            if h is not None:
                h.detach_()  # <-- IPL007: in-place detach of state tensors that are views in the live graph


class RNNDecoderState(DecoderState):
    def __init__(self, rnnstate, input_feed=None, coverage=None):
        if not isinstance(rnnstate, tuple):
            self.hidden = (rnnstate,)
        else:
            self.hidden = rnnstate
        self.input_feed = input_feed
        self.coverage = coverage
        self.all = self.hidden + (self.input_feed,)

    def update_state(self, rnnstate, input_feed, coverage):
        if not isinstance(rnnstate, tuple):
            self.hidden = (rnnstate,)
        else:
            self.hidden = rnnstate
        self.input_feed = input_feed
        self.coverage = coverage
        self.all = self.hidden + (self.input_feed,)


class GlobalAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear_in = nn.Linear(dim, dim, bias=False)
        self.linear_out = nn.Linear(dim * 2, dim, bias=False)

    def forward(self, h_t, context):
        scores = torch.bmm(context, self.linear_in(h_t).unsqueeze(2)).squeeze(2)
        align = torch.softmax(scores, dim=-1)
        c_t = torch.bmm(align.unsqueeze(1), context).squeeze(1)
        return torch.tanh(self.linear_out(torch.cat([c_t, h_t], 1))), align


class InputFeedRNNDecoder(nn.Module):
    def __init__(self, emb_size, hidden_size):
        super().__init__()
        self.rnn = nn.LSTMCell(emb_size + hidden_size, hidden_size)
        self.attn = GlobalAttention(hidden_size)
        self.hidden_size = hidden_size

    def forward(self, emb, context, state):
        output = state.input_feed.squeeze(0)
        hidden = (state.hidden[0].squeeze(0), state.hidden[1].squeeze(0))
        outputs = []
        for emb_t in emb.split(1):
            rnn_input = torch.cat([emb_t.squeeze(0), output], 1)
            hidden = self.rnn(rnn_input, hidden)
            output, attn = self.attn(hidden[0], context)
            outputs += [output]
        state.update_state((hidden[0].unsqueeze(0), hidden[1].unsqueeze(0)), output.unsqueeze(0), None)
        return torch.stack(outputs), state


vocab, emb_size, hidden_size, batch = 12, 6, 8, 2
src_emb = nn.Embedding(vocab, emb_size)
tgt_emb = nn.Embedding(vocab, emb_size)
encoder = nn.LSTM(emb_size, hidden_size)
decoder = InputFeedRNNDecoder(emb_size, hidden_size)
generator = nn.Linear(hidden_size, vocab)
params = [p for m in (src_emb, tgt_emb, encoder, decoder, generator) for p in m.parameters()]
optim = torch.optim.SGD(params, lr=0.1)

src = torch.randint(0, vocab, (5, batch))
tgt = torch.randint(0, vocab, (7, batch))


def model(src, tgt, dec_state=None):
    context, (h_n, c_n) = encoder(src_emb(src))
    enc_state = RNNDecoderState((h_n, c_n), torch.zeros(1, batch, hidden_size))
    outputs, dec_state = decoder(tgt_emb(tgt), context.transpose(0, 1), enc_state if dec_state is None else dec_state)
    return outputs, dec_state


trunc_size = 3
dec_state = None
losses = []
optim.zero_grad()
for j in range(0, tgt.size(0) - 1, trunc_size):
    tgt_out = tgt[j + 1: j + 1 + trunc_size]
    tgt_in = tgt[j: j + tgt_out.size(0)]
    outputs, dec_state = model(src, tgt_in, dec_state)
    loss = nn.functional.cross_entropy(generator(outputs).view(-1, vocab), tgt_out.reshape(-1))
    loss.backward()
    losses.append(loss.detach())
    if dec_state is not None:
        dec_state.detach()
optim.step()
