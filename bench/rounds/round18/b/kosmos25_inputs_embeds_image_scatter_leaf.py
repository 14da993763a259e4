# label: hazard raises
# why: with LoRA the frozen token embedding gets an enable_input_require_grads forward hook that turns its output into a grad-requiring leaf, and the forward then writes the image features into inputs_embeds in place
# source: https://github.com/huggingface/transformers/pull/43418
import torch
import torch.nn as nn

torch.manual_seed(0)


class Kosmos2_5ImageToTextProjection(nn.Module):
    def __init__(self, vision_dim, text_dim, num_query_tokens=2):
        super().__init__()
        self.dense = nn.Linear(vision_dim, text_dim)
        self.latent_query = nn.Parameter(torch.randn(num_query_tokens, text_dim))
        self.attn = nn.MultiheadAttention(text_dim, num_heads=2, batch_first=True)

    def forward(self, features):
        hidden_states = self.dense(features)
        latent_query = self.latent_query.unsqueeze(0).expand(hidden_states.size(0), -1, -1)
        key_value_states = torch.cat([hidden_states, latent_query], dim=1)
        out, _ = self.attn(latent_query, key_value_states, key_value_states)
        return out


class Kosmos2_5TextModel(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.q_proj = nn.Linear(dim, dim)
        self.layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=2 * dim, batch_first=True, dropout=0.0)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def get_input_embeddings(self):
        return self.embed_tokens

    def forward(self, inputs_embeds):
        return self.lm_head(self.layer(self.q_proj(inputs_embeds)))


class Kosmos2_5ForConditionalGeneration(nn.Module):
    def __init__(self, vocab=30, dim=8, vision_dim=6):
        super().__init__()
        self.vision_model = nn.Sequential(nn.Linear(vision_dim, vision_dim), nn.GELU())
        self.image_to_text_projection = Kosmos2_5ImageToTextProjection(vision_dim, dim)
        self.text_model = Kosmos2_5TextModel(vocab, dim)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.text_model.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, flattened_patches, image_embeds_position_mask, labels):
        image_embeds = self.image_to_text_projection(self.vision_model(flattened_patches))
        inputs_embeds = self.text_model.embed_tokens(input_ids)
        inputs_embeds[image_embeds_position_mask == 1] = image_embeds.reshape(-1, image_embeds.size(-1))  # <-- IPL003: inputs_embeds is a leaf made to require grad by the hook
        logits = self.text_model(inputs_embeds)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return loss, logits


model = Kosmos2_5ForConditionalGeneration()
# PEFT/LoRA-style setup: freeze the base model, train only the adapters (here q_proj), and
# make the embedding output require grad so gradient checkpointing / adapters get gradients
for name, p in model.named_parameters():
    p.requires_grad_("q_proj" in name)
model.enable_input_require_grads()

input_ids = torch.randint(2, 30, (2, 7))
image_embeds_position_mask = torch.zeros(2, 7, dtype=torch.long)
image_embeds_position_mask[:, 1:3] = 1
flattened_patches = torch.randn(2, 4, 6)
loss, logits = model(input_ids, flattened_patches, image_embeds_position_mask, input_ids)
loss.backward()
