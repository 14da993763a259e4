# label: safe
# why: the fixed coverage update builds a new tensor each step (`coverage + attn`), so the softmax align vectors saved for backward and stored in attns["std"] are never written.
# source: https://github.com/OpenNMT/OpenNMT-py/pull/161 (commit 682b2d9f, follow-up of 790683e1e155ca5aa2284288f6d6e68571ba79b1)
import torch
import torch.nn as nn

torch.manual_seed(0)


class GlobalAttention(nn.Module):
    def __init__(self, dim, attn_type="dot"):
        super(GlobalAttention, self).__init__()
        self.dim = dim
        self.attn_type = attn_type
        self.sm = nn.Softmax(dim=-1)
        self.linear_out = nn.Linear(dim * 2, dim, bias=False)
        self.tanh = nn.Tanh()

    def score(self, h_t, h_s):
        return torch.bmm(h_s, h_t.unsqueeze(2)).squeeze(2)

    def forward(self, input, context):
        a_t = self.score(input, context)
        align_vector = self.sm(a_t)
        c_t = torch.bmm(align_vector.unsqueeze(1), context).squeeze(1)
        attn_h_t = self.linear_out(torch.cat([c_t, input], 1))
        attn_h_t = self.tanh(attn_h_t)
        return attn_h_t, align_vector


class Decoder(nn.Module):
    def __init__(self, vocab_size, word_vec_size, rnn_size, coverage_attn=True, input_feed=True):
        super(Decoder, self).__init__()
        self._coverage = coverage_attn
        self.input_feed = input_feed
        input_size = word_vec_size + (rnn_size if input_feed else 0)
        self.embeddings = nn.Embedding(vocab_size, word_vec_size)
        self.rnn = nn.GRUCell(input_size, rnn_size)
        self.dropout = nn.Dropout(0.0)
        self.attn = GlobalAttention(rnn_size)

    def forward(self, input, context, hidden, input_feed):
        emb = self.embeddings(input)
        outputs = []
        attns = {"std": []}
        if self._coverage:
            attns["coverage"] = []
        output = input_feed
        coverage = None
        for i, emb_t in enumerate(emb.split(1)):
            emb_t = emb_t.squeeze(0)
            if self.input_feed:
                emb_t = torch.cat([emb_t, output], 1)
            hidden = self.rnn(emb_t, hidden)
            attn_output, attn = self.attn(hidden, context.transpose(0, 1))
            output = self.dropout(attn_output)
            outputs += [output]
            attns["std"] += [attn]

            # COVERAGE
            if self._coverage:
                coverage = coverage + attn \
                    if coverage is not None else attn
                attns["coverage"] += [coverage]
        outputs = torch.stack(outputs)
        for k in attns:
            attns[k] = torch.stack(attns[k])
        return outputs, hidden, attns


def main():
    src_len, tgt_len, batch, dim = 5, 4, 3, 8
    decoder = Decoder(vocab_size=12, word_vec_size=6, rnn_size=dim)
    generator = nn.Linear(dim, 12)
    context = torch.randn(src_len, batch, dim, requires_grad=True)
    tgt = torch.randint(0, 12, (tgt_len, batch))
    outputs, hidden, attns = decoder(tgt, context, torch.zeros(batch, dim), torch.zeros(batch, dim))
    logits = generator(outputs)
    loss = nn.functional.cross_entropy(logits.view(-1, 12), tgt.view(-1))
    # coverage penalty from See et al.: sum_t min(attn_t, coverage_{t-1})
    cov_loss = torch.min(attns["std"][1:], attns["coverage"][:-1]).sum()
    (loss + 0.1 * cov_loss).backward()
    return loss.detach(), context.grad, generator.weight.grad


loss, context_grad, generator_grad = main()
