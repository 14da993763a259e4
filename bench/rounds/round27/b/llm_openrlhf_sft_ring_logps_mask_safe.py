# label: safe
# why: the ring-attention SFT loss masks per_token_logps with *=, but per_token_logps is a fresh gather/squeeze result that no backward saved (GatherBackward keeps only the index), so the in-place mask gives the same loss and gradients as the out-of-place version.
# source: https://github.com/OpenRLHF/OpenRLHF/commit/990274872fe4ee0ef9e043d75afcb82622b82574 (pre-change openrlhf/trainer/sft_trainer.py, ring-attention branch of SFTTrainer.fit)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GPTLMLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.IGNORE_INDEX = -100


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=11, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.mix = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, inputs, attention_mask=None, return_output=True):
        h = self.embed(inputs)
        h = torch.cumsum(torch.tanh(self.mix(h)), dim=1)  # causal mixing
        return {"logits": self.lm_head(h)}


def all_reduce(chunk_losses):
    return torch.stack(chunk_losses).mean()


def ring_attn_sft_loss(model, loss_fn, inputs, attention_mask, prompts_id_lens, ring_attn_size=2):
    # create labels
    labels = torch.where(attention_mask.bool(), inputs, loss_fn.IGNORE_INDEX)
    index = 0
    for input_length, source_len in zip([inputs.shape[1]], prompts_id_lens):
        labels[0][index: index + source_len] = loss_fn.IGNORE_INDEX
        index += input_length

    logits = model(inputs, attention_mask=attention_mask, return_output=True)["logits"]
    total_seq_len = labels.numel()
    local_seq_len = total_seq_len // ring_attn_size
    labels[:, -1] = loss_fn.IGNORE_INDEX

    chunk_losses = []
    for rank in range(ring_attn_size):
        local_logits = logits[:, rank * local_seq_len:(rank + 1) * local_seq_len]
        local_slice = slice(rank * local_seq_len + 1, (rank + 1) * local_seq_len + 1)
        local_label = labels[:, local_slice]
        if rank == ring_attn_size - 1:  # add a dummy label to the last logit
            local_label = F.pad(local_label, (0, 1), value=loss_fn.IGNORE_INDEX)
        local_mask = (local_label == loss_fn.IGNORE_INDEX)

        # convert -100 in local_label into 0 for `torch.gather` operation
        local_label[local_label == loss_fn.IGNORE_INDEX] = 0
        per_token_logps = torch.gather(local_logits.log_softmax(-1), dim=2, index=local_label.unsqueeze(2)).squeeze(2)

        per_token_logps *= ~local_mask
        per_chunk_loss = -torch.mean(per_token_logps)
        chunk_losses.append(per_chunk_loss)
    return all_reduce(chunk_losses)


def main():
    model = TinyCausalLM()
    loss_fn = GPTLMLoss()
    inputs = torch.randint(1, 11, (1, 10))
    attention_mask = torch.ones(1, 10, dtype=torch.long)
    gpt_loss = ring_attn_sft_loss(model, loss_fn, inputs, attention_mask, prompts_id_lens=[4])
    gpt_loss.backward()
    return gpt_loss.detach(), model.lm_head.weight.grad, model.embed.weight.grad


gpt_loss, head_grad, embed_grad = main()
