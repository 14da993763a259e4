# label: hazard raises
# why: AttentionControl.__call__ writes the controller output back into attention_probs[h//2:] in place, but attention_probs is the softmax output that SoftmaxBackward saved, so the attention/mse loss backward finds it at a newer version.
# source: https://github.com/google/break-a-scene/pull/20
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AttentionControl:
    def __init__(self):
        self.cur_step = 0
        self.num_att_layers = -1
        self.cur_att_layer = 0

    @property
    def num_uncond_att_layers(self):
        return 0

    def between_steps(self):
        return

    def forward(self, attn, is_cross, place_in_unet):
        raise NotImplementedError

    def __call__(self, attn, is_cross, place_in_unet):
        if self.cur_att_layer >= self.num_uncond_att_layers:
            h = attn.shape[0]
            attn[h // 2:] = self.forward(attn[h // 2:], is_cross, place_in_unet)  # <-- IPL001
        self.cur_att_layer += 1
        if self.cur_att_layer == self.num_att_layers + self.num_uncond_att_layers:
            self.cur_att_layer = 0
            self.cur_step += 1
            self.between_steps()
        return attn


class AttentionStore(AttentionControl):
    @staticmethod
    def get_empty_store():
        return {"down_cross": [], "mid_cross": [], "up_cross": [],
                "down_self": [], "mid_self": [], "up_self": []}

    def __init__(self):
        super().__init__()
        self.step_store = self.get_empty_store()
        self.attention_store = {}

    def forward(self, attn, is_cross, place_in_unet):
        key = f"{place_in_unet}_{'cross' if is_cross else 'self'}"
        if attn.shape[1] <= 32 ** 2:
            self.step_store[key].append(attn)
        return attn

    def between_steps(self):
        if len(self.attention_store) == 0:
            self.attention_store = self.step_store
        self.step_store = self.get_empty_store()


class CrossAttention(nn.Module):
    def __init__(self, query_dim, context_dim, heads=2, dim_head=8):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_q = nn.Linear(query_dim, inner, bias=False)
        self.to_k = nn.Linear(context_dim, inner, bias=False)
        self.to_v = nn.Linear(context_dim, inner, bias=False)
        self.to_out = nn.Linear(inner, query_dim)
        self.processor = None

    def head_to_batch_dim(self, t):
        b, n, d = t.shape
        t = t.reshape(b, n, self.heads, d // self.heads).permute(0, 2, 1, 3)
        return t.reshape(b * self.heads, n, d // self.heads)

    def batch_to_head_dim(self, t):
        bh, n, d = t.shape
        t = t.reshape(bh // self.heads, self.heads, n, d).permute(0, 2, 1, 3)
        return t.reshape(bh // self.heads, n, d * self.heads)

    def get_attention_scores(self, query, key):
        scores = torch.bmm(query, key.transpose(-1, -2)) * self.scale
        return scores.softmax(dim=-1)

    def forward(self, hidden_states, encoder_hidden_states=None):
        return self.processor(self, hidden_states, encoder_hidden_states)


class P2PCrossAttnProcessor:
    def __init__(self, controller, place_in_unet):
        self.controller = controller
        self.place_in_unet = place_in_unet

    def __call__(self, attn, hidden_states, encoder_hidden_states=None):
        query = attn.to_q(hidden_states)
        is_cross = encoder_hidden_states is not None
        encoder_hidden_states = encoder_hidden_states if is_cross else hidden_states
        key = attn.head_to_batch_dim(attn.to_k(encoder_hidden_states))
        value = attn.head_to_batch_dim(attn.to_v(encoder_hidden_states))
        query = attn.head_to_batch_dim(query)
        attention_probs = attn.get_attention_scores(query, key)
        # one line change
        self.controller(attention_probs, is_cross, self.place_in_unet)
        hidden_states = torch.bmm(attention_probs, value)
        hidden_states = attn.batch_to_head_dim(hidden_states)
        return attn.to_out(hidden_states)


def main():
    controller = AttentionStore()
    down = CrossAttention(16, 12)
    up = CrossAttention(16, 12)
    down.processor = P2PCrossAttnProcessor(controller, "down")
    up.processor = P2PCrossAttnProcessor(controller, "up")
    controller.num_att_layers = 2

    latents = torch.randn(2, 16, 16)
    encoder_hidden_states = torch.randn(2, 6, 12, requires_grad=True)
    h = down(latents, encoder_hidden_states)
    model_pred = up(h, encoder_hidden_states)
    loss = F.mse_loss(model_pred, torch.randn_like(model_pred))

    agg = torch.cat([controller.attention_store["down_cross"][0],
                     controller.attention_store["up_cross"][0]], dim=0).mean(0)
    asset_attn_mask = agg[..., 3] / agg[..., 3].max()
    GT_mask = (torch.arange(16) < 8).float()
    loss = loss + 1e-2 * F.mse_loss(GT_mask, asset_attn_mask)
    loss.backward()
    print(encoder_hidden_states.grad.abs().sum().item())


main()
