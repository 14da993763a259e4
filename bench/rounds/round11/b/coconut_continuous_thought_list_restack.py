# label: safe
# why: as in Coconut, inputs_embeds is broken into a list of row tensors and re-stacked after the continuous thoughts are swapped in, so no tensor saved by an earlier pass is written in place.
# source: https://github.com/facebookresearch/coconut/blob/9a7653572426acd8724c083c6547a016711761ae/coconut.py
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss
from collections import namedtuple

torch.manual_seed(0)

Outputs = namedtuple("Outputs", ["loss", "inputs_embeds", "logits"])
CausalLMOutput = namedtuple("CausalLMOutput", ["logits", "hidden_states"])


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.ln_in = nn.LayerNorm(hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def get_input_embeddings(self):
        return self.wte

    def forward(self, inputs_embeds, attention_mask=None, position_ids=None, output_hidden_states=True):
        h = self.proj(self.ln_in(inputs_embeds))
        counts = torch.arange(1, h.shape[1] + 1, dtype=h.dtype).view(1, -1, 1)
        h = h.cumsum(dim=1) / counts  # causal mixing
        h = h + self.mlp(h)
        return CausalLMOutput(logits=self.lm_head(h), hidden_states=(inputs_embeds, h))


class Coconut(nn.Module):
    def __init__(self, base_causallm, latent_token_id, start_latent_id, end_latent_id, eos_token_id):
        super(Coconut, self).__init__()
        self.gen_forward_cnt = 0
        self.base_causallm = base_causallm
        self.latent_token_id = latent_token_id
        self.eos_token_id = eos_token_id
        self.start_latent_id = start_latent_id
        self.end_latent_id = end_latent_id
        self.embedding = self.base_causallm.get_input_embeddings()

    def forward(self, input_ids, attention_mask, labels, position_ids, **kwargs):
        logits = []
        latent_indices = (input_ids == self.latent_token_id).nonzero()
        latent_lists = [
            [idx[1].item() for idx in latent_indices if idx[0] == i]
            for i in range(input_ids.shape[0])
        ]
        max_n_latents = max([len(l) for l in latent_lists])
        next_compute_range = (0, input_ids.shape[1])
        inputs_embeds = self.embedding(input_ids)
        if max_n_latents > 0:
            next_compute_range = (0, latent_indices[:, 1].min().item())

        for pass_idx in range(max_n_latents):
            # (no kv cache in this reduction: recompute the whole prefix)
            outputs = self.base_causallm(
                inputs_embeds=inputs_embeds[:, : next_compute_range[1], :],
                attention_mask=attention_mask[:, : next_compute_range[1]],
                position_ids=position_ids[:, : next_compute_range[1]],
                output_hidden_states=True,
            )
            hidden_states_offset = 0
            logits.append(outputs.logits[:, next_compute_range[0]:, :])
            next_compute_range = (
                next_compute_range[1],
                (input_ids.shape[1] if pass_idx + 1 >= max_n_latents else next_compute_range[1] + 1),
            )
            hidden_states = outputs.hidden_states[-1]

            filling_indices = [
                (instance_idx, mask_list[pass_idx])
                for instance_idx, mask_list in enumerate(latent_lists)
                if len(mask_list) > pass_idx
            ]

            # to avoid in-place operations
            # break down inputs_embeds (bs, len, hidden_size) into a list of list of 1-d tensors
            tensor_list = [
                [inputs_embeds[batch_idx, pos, :] for pos in range(inputs_embeds.shape[1])]
                for batch_idx in range(inputs_embeds.shape[0])
            ]
            # replace some of them with continuous thoughts
            for idx_pair in filling_indices:
                batch_idx, token_idx = idx_pair
                tensor_list[batch_idx][token_idx] = hidden_states[batch_idx, token_idx - 1 - hidden_states_offset, :]
            # assemble the new inputs_embeds
            inputs_embeds = torch.stack(
                [torch.stack(tensor_list[batch_idx]) for batch_idx in range(inputs_embeds.shape[0])]
            )

        # final pass
        outputs = self.base_causallm(
            inputs_embeds=inputs_embeds[:, : next_compute_range[1], :],
            attention_mask=attention_mask[:, : next_compute_range[1]],
            position_ids=position_ids[:, : next_compute_range[1]],
            output_hidden_states=True,
        )
        logits.append(outputs.logits[:, next_compute_range[0]:, :])
        self.gen_forward_cnt += max_n_latents + 1

        logits = torch.cat(logits, dim=-2)
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        loss_fct = CrossEntropyLoss()
        loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return Outputs(loss=loss, inputs_embeds=inputs_embeds, logits=logits)


LATENT, START, END, EOS = 17, 18, 19, 1
model = Coconut(TinyCausalLM(), LATENT, START, END, EOS)
input_ids = torch.tensor([
    [3, 4, START, LATENT, LATENT, END, 5, 6, 7, EOS],
    [8, 9, START, LATENT, LATENT, END, 10, 11, 12, EOS],
])
attention_mask = torch.ones_like(input_ids)
position_ids = torch.arange(input_ids.shape[1]).unsqueeze(0).expand_as(input_ids)
labels = input_ids.clone()
outputs = model(input_ids, attention_mask, labels, position_ids)
loss = outputs.loss
loss.backward()
