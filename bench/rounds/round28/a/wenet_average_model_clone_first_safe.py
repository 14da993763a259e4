# label: safe
# why: post-fix average_model starts the accumulator from a clone of every entry of the first checkpoint, so tied keys no longer share one storage and the in-place += adds each checkpoint exactly once per key.
# source: https://github.com/wenet-e2e/wenet/pull/2113 (commit e1f07c363f7a72d40e5d8d61f96d8f8a5aa1cec4, pre-fix wenet/bin/average_model.py)
import io

import torch
import torch.nn as nn

torch.manual_seed(0)


class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size=12, attention_dim=8):
        super().__init__()
        self.embed = nn.Sequential(nn.Embedding(vocab_size, attention_dim))
        self.after_norm = nn.LayerNorm(attention_dim)
        self.output_layer = nn.Linear(attention_dim, vocab_size, bias=False)

    def tie_or_clone_weights(self, jit_mode=False):
        self.output_layer.weight = self.embed[0].weight

    def forward(self, memory, ys_in_pad):
        x = self.embed(ys_in_pad) + memory.mean(dim=1, keepdim=True)
        return self.output_layer(self.after_norm(x))


class ASRModel(nn.Module):
    def __init__(self, input_dim=6, vocab_size=12, output_size=8):
        super().__init__()
        self.encoder = nn.Linear(input_dim, output_size)
        self.decoder = TransformerDecoder(vocab_size, output_size)
        self.ctc_lo = nn.Linear(output_size, vocab_size)

    def tie_or_clone_weights(self, jit_mode=False):
        self.decoder.tie_or_clone_weights(jit_mode)

    def forward(self, speech, ys_in_pad, ys_out_pad):
        encoder_out = torch.tanh(self.encoder(speech))
        decoder_out = self.decoder(encoder_out, ys_in_pad)
        loss_att = nn.functional.cross_entropy(decoder_out.transpose(1, 2), ys_out_pad)
        loss_ctc = self.ctc_lo(encoder_out).logsumexp(-1).mean()
        return loss_att + 0.3 * loss_ctc


def train_and_checkpoint(num_epochs=3):
    model = ASRModel()
    model.tie_or_clone_weights()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    path_list = []
    for epoch in range(num_epochs):
        speech = torch.randn(4, 10, 6)
        ys = torch.randint(0, 12, (4, 5))
        loss = model(speech, ys, ys)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        buf = io.BytesIO()
        torch.save(model.state_dict(), buf)
        path_list.append(buf.getvalue())
    return path_list


def main():
    path_list = train_and_checkpoint()
    avg = {}
    num = 3
    assert num == len(path_list)
    for path in path_list:
        states = torch.load(io.BytesIO(path), map_location=torch.device('cpu'))
        for k in states.keys():
            if k not in avg.keys():
                avg[k] = states[k].clone()
            else:
                avg[k] += states[k]
    # average
    for k in avg.keys():
        if avg[k] is not None:
            # pytorch 1.6 use true_divide instead of /=
            avg[k] = torch.true_divide(avg[k], num)
    return avg["decoder.embed.0.weight"], avg["decoder.output_layer.weight"], avg["encoder.weight"]


embed_weight, output_weight, encoder_weight = main()
