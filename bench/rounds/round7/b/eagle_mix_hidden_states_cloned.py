# label: safe
# why: fixed loop clones eagle_input_hiddens before the indexed assignment, so the rows are written into a fresh copy and the earlier step's saved input stays intact.
# source: https://github.com/NVIDIA/Model-Optimizer/pull/1104
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EagleModule(nn.Module):
    """Single draft decoder layer on top of [input_embeds, hidden_states]."""

    def __init__(self, hidden_size, vocab_size):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.hidden_norm = nn.LayerNorm(hidden_size)
        self.fc_in = nn.Linear(2 * hidden_size, hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 2 * hidden_size), nn.SiLU(), nn.Linear(2 * hidden_size, hidden_size))
        self.norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, hidden_states, inputs_embeds):
        inputs_embeds = self.input_layernorm(inputs_embeds)
        hidden_states = self.hidden_norm(hidden_states)
        x = self.fc_in(torch.cat([inputs_embeds, hidden_states], dim=-1))
        x = x + self.mlp(x)
        eagle_output_hiddens = self.norm(x)
        return eagle_output_hiddens, self.lm_head(eagle_output_hiddens)


class HFEagleModel(nn.Module):
    def __init__(self, vocab_size=17, hidden_size=8, eagle_ttt_steps=2, eagle_mix_hidden_states=True):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.base_layers = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(3)])
        self.eagle_fc = nn.Linear(3 * hidden_size, hidden_size, bias=False)  # fuses aux hidden states (EAGLE-3)
        self.eagle_module = EagleModule(hidden_size, vocab_size)
        self.eagle_ttt_steps = eagle_ttt_steps
        self.eagle_mix_hidden_states = eagle_mix_hidden_states
        self.eagle_loss_decay_factor = 0.9
        for p in list(self.embed_tokens.parameters()) + list(self.base_layers.parameters()):
            p.requires_grad = False

    def _base_model_forward(self, input_ids):
        with torch.no_grad():
            hidden = self.embed_tokens(input_ids)
            aux_hidden_states = []
            for layer in self.base_layers:
                hidden = torch.tanh(layer(hidden))
                aux_hidden_states.append(hidden)
        return hidden, aux_hidden_states

    def _eagle_training_forward(self, input_ids, labels):
        _, aux_hidden_states = self._base_model_forward(input_ids)
        inputs_embeds = self.embed_tokens(input_ids)
        eagle_input_hiddens = self.eagle_fc(torch.cat(aux_hidden_states, dim=-1))
        eagle_loss = 0.0
        for ttt_step in range(self.eagle_ttt_steps):
            eagle_output_hiddens, eagle_logits = self.eagle_module(eagle_input_hiddens, inputs_embeds)
            step_loss = F.cross_entropy(eagle_logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())
            eagle_loss = eagle_loss + (self.eagle_loss_decay_factor ** ttt_step) * step_loss
            if self.eagle_mix_hidden_states:
                batch_size, seq_len_s, _ = eagle_input_hiddens.shape
                num_to_replace = max(1, seq_len_s // 4)
                rand_indices = torch.rand(batch_size, seq_len_s).argsort(dim=1)[:, :num_to_replace]
                batch_indices = torch.arange(batch_size)[:, None]
                eagle_input_hiddens = eagle_input_hiddens.clone()
                eagle_input_hiddens[batch_indices, rand_indices] = eagle_output_hiddens[batch_indices, rand_indices]
            else:
                eagle_input_hiddens = eagle_output_hiddens
        return eagle_loss

    def forward(self, input_ids, labels):
        return self._eagle_training_forward(input_ids, labels)


model = HFEagleModel()
model.train()
input_ids = torch.randint(0, 17, (2, 8))
labels = input_ids.clone()
loss = model(input_ids=input_ids, labels=labels)
loss.backward()
