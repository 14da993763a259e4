# label: hazard silent
# why: shifting the decoder inputs right is done in place on the same tensor (shifted[:, 1:] = shifted[:, :-1]); source and destination overlap, the copy propagates the first token along each row, and the decoder silently trains on garbage inputs.
# source: https://github.com/pytorch/pytorch/issues/906
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def shift_tokens_right(input_ids, pad_token_id, decoder_start_token_id):
    """Shift input ids one token to the right."""
    shifted_input_ids = input_ids.clone()
    prev_tokens = shifted_input_ids[:, :-1]
    shifted_input_ids[:, 1:] = prev_tokens  # <-- IPL002: prev_tokens is an overlapping view of the tensor being written
    shifted_input_ids[:, 0] = decoder_start_token_id
    shifted_input_ids.masked_fill_(shifted_input_ids == -100, pad_token_id)
    return shifted_input_ids


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=16, d=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.GRU(d, d, batch_first=True)
        self.decoder = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, input_ids, decoder_input_ids):
        _, h = self.encoder(self.embed(input_ids))
        out, _ = self.decoder(self.embed(decoder_input_ids), h)
        return self.lm_head(out)


model = TinySeq2Seq()
input_ids = torch.tensor([[3, 7, 9, 4, 2], [5, 6, 8, 2, 0]])
labels = torch.tensor([[11, 12, 13, 2, -100], [14, 15, 2, -100, -100]])
decoder_input_ids = shift_tokens_right(labels, pad_token_id=0, decoder_start_token_id=1)
logits = model(input_ids, decoder_input_ids)
loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
loss.backward()
