# label: safe
# why: the follow-up fix accumulates coverage out of place (coverage = coverage + attn, starting from attn), so the attention softmax output saved for backward is never overwritten.
# source: https://github.com/OpenNMT/OpenNMT-py/commit/3dcea332741e1986d0aea82c8655c4631280a1d3 (fixed onmt/Models.py; `if coverage` written as `is not None`)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GlobalAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear_out = nn.Linear(dim * 2, dim, bias=False)

    def forward(self, input, context):
        # input: batch x dim, context: batch x src_len x dim
        align = torch.bmm(context, input.unsqueeze(2)).squeeze(2)
        attn = F.softmax(align, dim=-1)
        c = torch.bmm(attn.unsqueeze(1), context).squeeze(1)
        attn_h = torch.tanh(self.linear_out(torch.cat([c, input], 1)))
        return attn_h, attn


class Decoder(nn.Module):
    def __init__(self, vocab_size, emb_size, hidden_size, coverage_attn=True):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, emb_size)
        self.input_feed = True
        self.rnn = nn.LSTMCell(emb_size + hidden_size, hidden_size)
        self.attn = GlobalAttention(hidden_size)
        self.dropout = nn.Dropout(0.0)
        self._coverage = coverage_attn

    def forward(self, input, context, hidden, input_feed, coverage=None):
        emb = self.embeddings(input)
        outputs = []
        attns = {"std": []}
        if self._coverage:
            attns["coverage"] = []
        output = input_feed
        for i, emb_t in enumerate(emb.split(1)):
            emb_t = emb_t.squeeze(0)
            if self.input_feed:
                emb_t = torch.cat([emb_t, output], 1)
            rnn_output, cell = self.rnn(emb_t, hidden)
            hidden = (rnn_output, cell)
            attn_output, attn = self.attn(rnn_output, context.transpose(0, 1))
            output = self.dropout(attn_output)
            outputs += [output]
            attns["std"] += [attn]

            # COVERAGE
            if self._coverage:
                coverage = (coverage + attn) if coverage is not None else attn
                attns["coverage"] += [coverage]
        outputs = torch.stack(outputs)
        for k in attns:
            attns[k] = torch.stack(attns[k])
        return outputs, attns


def main():
    tgt_len, src_len, batch, hidden_size = 5, 7, 3, 8
    decoder = Decoder(vocab_size=20, emb_size=6, hidden_size=hidden_size)
    generator = nn.Linear(hidden_size, 20)
    context = torch.randn(src_len, batch, hidden_size, requires_grad=True)
    tgt = torch.randint(0, 20, (tgt_len + 1, batch))
    hidden = (torch.zeros(batch, hidden_size), torch.zeros(batch, hidden_size))
    input_feed = torch.zeros(batch, hidden_size)
    outputs, attns = decoder(tgt[:-1], context, hidden, input_feed)
    scores = F.log_softmax(generator(outputs), dim=-1)
    loss = F.nll_loss(scores.view(-1, 20), tgt[1:].reshape(-1), reduction="sum")
    covloss = torch.min(attns["std"], attns["coverage"]).sum()
    total = loss + 0.1 * covloss
    total.backward()
    return total.detach(), context.grad, decoder.rnn.weight_ih.grad


total, context_grad, rnn_grad = main()
